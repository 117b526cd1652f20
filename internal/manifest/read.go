package manifest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tinyctl/tinyctl/api/decode"
)

// StdinName is how problems name standard input (the path "-").
const StdinName = "<stdin>"

// Source is the text of one input file.
type Source struct {
	// Name is the path as the user gave it, or StdinName.
	Name string
	Data []byte
}

// Extensions are the file name endings read from a directory.
var extensions = []string{".yaml", ".yml", ".json"}

// Read returns the sources paths name: "-" is stdin (read at most once), a
// file is read whatever its name, a directory contributes its *.yaml,
// *.yml and *.json files in name order (and those of its subdirectories
// when recursive). Each source is capped at decode.MaxSize + 1 bytes so that
// decoding reports an oversized one. It returns an error naming the first
// path that cannot be read.
func Read(paths []string, recursive bool, stdin io.Reader) ([]Source, error) {
	var out []Source
	stdinRead := false
	for _, p := range paths {
		if p == "-" {
			if stdinRead {
				return nil, fmt.Errorf("-f -: standard input can be read only once")
			}
			stdinRead = true
			data, err := readCapped(stdin)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", StdinName, err)
			}
			out = append(out, Source{Name: StdinName, Data: data})
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
		src, err := readFile(path)
		return []Source{src}, err
	}
	files, err := listDir(path, recursive)
	if err != nil {
		return nil, err
	}
	out := make([]Source, 0, len(files))
	for _, f := range files {
		src, err := readFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, src)
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

func readFile(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return Source{}, err
	}
	defer f.Close()
	data, err := readCapped(f)
	if err != nil {
		return Source{}, fmt.Errorf("read %s: %w", path, err)
	}
	return Source{Name: path, Data: data}, nil
}

func readCapped(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, decode.MaxSize+1))
}
