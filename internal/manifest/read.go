package manifest

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// StdinName is how problems name standard input (the path "-").
const StdinName = "<stdin>"

// Source is one input: a file, standard input or text in memory.
type Source struct {
	// Name is the path as the user gave it, or StdinName.
	Name string
	// Open returns the source's text, which Load reads once, document by
	// document.
	Open func() (io.ReadCloser, error)
}

// Bytes is a source holding data, named name.
func Bytes(name string, data []byte) Source {
	return Source{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// Extensions are the file name endings read from a directory.
var extensions = []string{".yaml", ".yml", ".json"}

// Read returns the sources paths name: "-" is stdin (read at most once), a
// file is read whatever its name, a directory contributes its *.yaml,
// *.yml and *.json files in name order (and those of its subdirectories
// when recursive). Nothing is read yet: Load reads each source document by
// document, each document capped at decode.MaxSize, the source not at all.
// It returns an error naming the first path that does not exist or whose
// directory cannot be listed.
func Read(paths []string, recursive bool, stdin io.Reader) ([]Source, error) {
	var out []Source
	stdinRead := false
	for _, p := range paths {
		if p == "-" {
			if stdinRead {
				return nil, fmt.Errorf("-f -: standard input can be read only once")
			}
			stdinRead = true
			out = append(out, Source{Name: StdinName, Open: func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }})
			continue
		}
		srcs, err := readPath(p, recursive)
		if err != nil {
			return nil, err
		}
		out = append(out, srcs...)
	}
	return out, nil
}

// readPath reads a file, or the matching files of a directory.
func readPath(path string, recursive bool) ([]Source, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []Source{fileSource(path)}, nil
	}
	files, err := listDir(path, recursive)
	if err != nil {
		return nil, err
	}
	out := make([]Source, 0, len(files))
	for _, f := range files {
		out = append(out, fileSource(f))
	}
	return out, nil
}

// listDir returns the component files under dir, sorted.
func listDir(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(extensions, strings.ToLower(filepath.Ext(p))) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// fileSource is the file at path, opened when Load reads it.
func fileSource(path string) Source {
	return Source{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}
