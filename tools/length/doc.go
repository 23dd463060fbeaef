// Package length holds no code: its test keeps the project's functions
// readable in one screen or two (at most 80 lines), but for the PTX writers
// that generate a kernel straight through, as tools/layers keeps the
// imports' arrows.
package length
