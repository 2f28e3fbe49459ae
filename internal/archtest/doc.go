// Package archtest holds no code: its test asserts the module's import
// boundaries and package names (STYLE.md "Package layout") with
// `go list -deps -json ./...`, which is depguard's job done with the
// standard toolchain.
package archtest
