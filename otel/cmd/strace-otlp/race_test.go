//go:build race

package main

// raceBuild: this test binary was built with -race (see goBuild).
const raceBuild = true
