// Package manifest reads the component documents a user hands to the CLI
// (files, directories, standard input) and turns them into validated,
// defaulted components ready to publish, or into problems located by file,
// document and field path.
//
// Nothing is partial: Load either returns every component of every input
// with no problems, or the complete list of problems, so a caller can
// refuse to publish anything when one document anywhere is wrong.
package manifest
