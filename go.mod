module simpler.dev/log

go 1.26.0

require (
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab
	golang.org/x/sys v0.50.0
)

require golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
