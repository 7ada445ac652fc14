module simpler.dev/log

go 1.26.0

require (
	github.com/lmittmann/tint v1.2.1
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab
	github.com/samber/slog-multi v1.8.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require (
	github.com/samber/lo v1.53.0 // indirect
	github.com/samber/slog-common v0.21.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.22.0 // indirect
)
