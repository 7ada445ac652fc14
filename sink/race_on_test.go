//go:build race

package sink

// raceBuild: the race detector slows producers and writer alike by an
// order of magnitude, so timing-dependent expectations are relaxed.
const raceBuild = true
