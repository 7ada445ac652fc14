//go:build !race

package sink

const raceBuild = false
