// Command crosscheck type-checks every package of the module, tests
// included, for other platforms, from source: the cross-platform half of
// make test.
//
//	go run ./internal/checks/crosscheck linux/arm64 linux/386 windows/amd64
//
// `GOOS=x go vet ./...` compiles the standard library and every
// dependency for each platform before it looks at a line of ours: on two
// cores about 50 s a platform from a cold cache. Type-checking from
// source (go/types, cgo off as for any cross build, the platform's tool
// tags and sizes) finds what a cross build would (a field or function
// that does not exist there, a type that differs, a file whose build
// constraints leave a package without a name it uses, a constant past 32
// bits on 386 and arm) in a few seconds a platform: our packages are
// checked in full, what they import by its declarations only (a
// dependency's function bodies cannot change what its importers see), and
// one go list a platform says where every package is. make test runs go
// vet in full on this machine's platform and this check on the others.
// What it does not run is vet's analyzers on another platform's files;
// make cross still does, for a release.
package main
