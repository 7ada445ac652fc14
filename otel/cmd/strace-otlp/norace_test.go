//go:build !race

package main

// raceBuild: this test binary was built without -race (see goBuild).
const raceBuild = false
