// Package ctest builds hostabi's test consumer module
// (hostabi/testdata/consumer.c) and calls its entry points, which Go test
// files cannot do themselves.
package ctest
