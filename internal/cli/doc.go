// Package cli holds what the module's commands share on their command
// lines.
package cli
