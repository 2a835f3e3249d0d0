package chart

import (
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/flotilla-dev/flotilla/charts"
)

// Name is the chart's name, and the directory under charts/ that holds it.
const Name = "flotilla"

// Load loads the chart embedded in the binary.
func Load() (*chart.Chart, error) {
	return LoadFS(charts.Flotilla, Name)
}

// LoadFS loads a chart from the directory dir of fsys (the embedded chart, or a copy of it).
func LoadFS(fsys fs.FS, dir string) (*chart.Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: strings.TrimPrefix(p, dir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read chart %s: %w", dir, err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	return c, nil
}
