// Package shapes holds no code: its test keeps the readers and the engine
// keyed on the catalogue's shapes (results.Shape) rather than on the names
// of copy tests, so that a test added to the catalogue gets its schedule,
// verdict, headline and figures by its shape (docs/development.md, "Adding
// a copy test"), as tools/layers keeps the imports' arrows.
package shapes
