// Command crosscheck type-checks every package of the module for other
// platforms, from source: the cross-platform half of make test.
//
//	go run ./internal/crosscheck linux/arm64 darwin/arm64 windows/amd64
//
// `GOOS=x go vet ./...` compiles the standard library and every
// dependency for each platform before it looks at a line of ours: on two
// cores about 50 s a platform from a cold cache, five platforms a third of
// make test. Type-checking from source (go/types with the source
// importer, cgo off as for any cross build) finds what a cross build
// would (a field or function that does not exist there, a type that
// differs, a file whose build constraints leave a package without a name
// it uses) in a few seconds a platform, so make test runs go vet in full
// on this machine's platform and this check on the others. What it does
// not run is vet's analyzers on another platform's files; make cross
// still does, for a release.
package main
