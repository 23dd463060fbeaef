// Package house holds no code: its tests keep the house rules, so that a
// change against one fails make test instead of waiting for a review:
//   - the arrows between the project's packages (docs/development.md,
//     "Layout"), layers_test.go;
//   - functions readable in a screen or two, at most 80 lines, but for the
//     PTX writers that generate a kernel straight through, length_test.go;
//   - the readers and the engine keyed on the catalogue's shapes
//     (results.Shape) rather than on the names of copy tests, so that a test
//     added to the catalogue gets its schedule, verdict, headline and
//     figures by its shape (docs/development.md, "Adding a copy test"),
//     shapes_test.go.
package house
