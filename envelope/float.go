package envelope

import (
	"math"
	"strconv"
)

// pow10 are the powers of ten a float64 holds exactly, as far as
// appendFloat needs them.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// appendFloat appends f as strconv.AppendFloat(b, f, 'g', -1, 64) does,
// byte for byte (the text slog's TextHandler writes, which readers
// parse), taking a short cut for the values logs are full of: from 1e-4 up
// to 1e6, with at most ten decimals. For such a value the shortest decimal
// that reads back as f is the one nearest f with the fewest decimals for
// which that holds, and with k decimals the nearest is round(f·10^k); a
// quotient of two integers a float64 holds exactly is correctly rounded,
// so d/10^k == f is the exact test that the decimal reads back as f. In
// that range 'g' writes no exponent. Anything else goes to strconv.
func appendFloat(b []byte, f float64) []byte {
	a := math.Abs(f)
	if !(a >= 1e-4 && a < 1e6) {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	for k := range pow10 {
		d := math.Round(a * pow10[k])
		if d >= 1<<53 {
			break
		}
		if d/pow10[k] != a {
			continue
		}
		if f < 0 {
			b = append(b, '-')
		}
		u := uint64(d)
		if k == 0 {
			return appendDecimal(b, u)
		}
		p := uint64(pow10[k])
		b = appendDecimal(b, u/p)
		b = append(b, '.')
		frac := u % p
		// The fraction's leading zeros, then its digits.
		for z := p / 10; z > frac && z > 1; z /= 10 {
			b = append(b, '0')
		}
		return appendDecimal(b, frac)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
