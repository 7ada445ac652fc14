module simpler.dev/log

go 1.26.0

require (
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab
	golang.org/x/sys v0.50.0
)
