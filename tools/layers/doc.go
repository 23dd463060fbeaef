// Package layers holds no code: its test checks the arrows between the
// project's packages (docs/development.md, "Layout"), so that an import
// against the layering fails make test instead of waiting for a review.
package layers
