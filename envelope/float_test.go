package envelope

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.25, 0.1, 0.2, 0.3, 0.29, 1.5, 3.14159, 0.0001, 0.00012, 0.00009999, 999999.5, 1e6, 123456.789,
		-0.001, 100, 1234.5678901, 0.1 + 0.2, 1.0000000001, 99.99, math.Copysign(0, -1), math.Inf(1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64,
		5e-324, 1e21, 12.000000001, 0.12345678901} {
		assert.Equal(t, strconv.FormatFloat(f, 'g', -1, 64), string(appendFloat(nil, f)), "%v", f)
	}
	// Decimals as logs hold them: prices, ratios, milliseconds.
	r := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		k := r.IntN(8)
		f := float64(r.Int64N(2_000_000_000)-1_000_000_000) / math.Pow(10, float64(k))
		if got, want := string(appendFloat(nil, f)), strconv.FormatFloat(f, 'g', -1, 64); got != want {
			t.Fatalf("%v: %q, want %q", f, got, want)
		}
		g := r.Float64() * math.Pow(10, float64(r.IntN(12)-5))
		if got, want := string(appendFloat(nil, g)), strconv.FormatFloat(g, 'g', -1, 64); got != want {
			t.Fatalf("%v: %q, want %q", g, got, want)
		}
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0.25, 0.1, 1e-4, 999999.99, 123.456} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if got, want := string(appendFloat(nil, v)), strconv.FormatFloat(v, 'g', -1, 64); got != want {
			t.Fatalf("%v: %q, want %q", v, got, want)
		}
	})
}

func BenchmarkAppendFloat(b *testing.B) {
	var buf [32]byte
	for _, f := range []float64{0.25, 3.14159, 1234.5678} {
		b.Run(strconv.FormatFloat(f, 'g', -1, 64), func(b *testing.B) {
			b.Run("strconv", func(b *testing.B) {
				for b.Loop() {
					strconv.AppendFloat(buf[:0], f, 'g', -1, 64)
				}
			})
			b.Run("envelope", func(b *testing.B) {
				for b.Loop() {
					appendFloat(buf[:0], f)
				}
			})
		})
	}
}
