// Package logtest holds helpers shared by this module's tests.
package logtest
