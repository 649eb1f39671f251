// chart-render: renders a Helm chart the way `helm template` does, for tests on machines without helm.
//
// It covers what ordinary charts use: text/template with sprig and Helm's include, tpl, required, toYaml,
// fromYaml, toJson and lookup (always empty, as in `helm template`); values from values.yaml, then each -f
// file, then each --set path=value, merged deeply; .Release, .Chart, .Capabilities (basics) and .Template.
// It does not cover subcharts, .Files, library charts, schema validation or API-version checks (see the chart
// README): the tests do those parts themselves.
//
// Build (Debian packages golang-go, golang-github-masterminds-sprig-dev, golang-k8s-sigs-yaml-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o chart-render render.go
//
// Usage: chart-render CHART_DIR [-f values.yaml]... [--set a.b=c]... [--notes]
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

type values = map[string]interface{}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "chart-render: "+format+"\n", args...)
	os.Exit(1)
}

func readYaml(path string) values {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	out := values{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		fail("%s: %v", path, err)
	}
	return out
}

// merge copies src over dst: maps merge key by key, anything else (lists included) replaces, as Helm does.
func merge(dst, src values) values {
	for key, value := range src {
		srcMap, srcIsMap := value.(map[string]interface{})
		dstMap, dstIsMap := dst[key].(map[string]interface{})
		if srcIsMap && dstIsMap {
			dst[key] = merge(dstMap, srcMap)
		} else {
			dst[key] = value
		}
	}
	return dst
}

// setValue applies one --set a.b.c=value: true/false/null and integers are typed, the rest stays text.
func setValue(into values, assignment string) {
	path, raw, found := strings.Cut(assignment, "=")
	if !found {
		fail("--set %q: expected path=value", assignment)
	}
	var value interface{} = raw
	if number, err := strconv.ParseInt(raw, 10, 64); err == nil {
		value = number
	} else if raw == "true" || raw == "false" {
		value = raw == "true"
	} else if raw == "null" {
		value = nil
	}
	keys := strings.Split(path, ".")
	node := into
	for _, key := range keys[:len(keys)-1] {
		child, ok := node[key].(map[string]interface{})
		if !ok {
			child = values{}
			node[key] = child
		}
		node = child
	}
	node[keys[len(keys)-1]] = value
}

func toYaml(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: chart-render CHART_DIR [-f values.yaml]... [--set a.b=c]... [--notes]")
	}
	chartDir := os.Args[1]
	vals := readYaml(filepath.Join(chartDir, "values.yaml"))
	notes := false
	for i := 2; i < len(os.Args); i++ {
		switch os.Args[i] {
		case "-f":
			i++
			vals = merge(vals, readYaml(os.Args[i]))
		case "--set":
			i++
			setValue(vals, os.Args[i])
		case "--notes":
			notes = true
		default:
			fail("unknown argument %q", os.Args[i])
		}
	}
	chartMeta := readYaml(filepath.Join(chartDir, "Chart.yaml"))
	chart := values{}
	for key, value := range chartMeta {
		chart[strings.ToUpper(key[:1])+key[1:]] = value
	}
	root := values{
		"Values": vals,
		"Chart":  chart,
		"Release": values{
			"Name": "marketplace", "Namespace": "marketplace", "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": values{
			"KubeVersion": values{"Version": "v1.31.0", "Major": "1", "Minor": "31", "GitVersion": "v1.31.0"},
			"APIVersions": []string{"v1", "apps/v1", "batch/v1", "policy/v1", "autoscaling/v2", "networking.k8s.io/v1"},
		},
	}

	templates := template.New("chart").Option("missingkey=zero")
	funcs := sprig.TxtFuncMap()
	funcs["toYaml"] = toYaml
	funcs["fromYaml"] = func(text string) values {
		out := values{}
		if err := yaml.Unmarshal([]byte(text), &out); err != nil {
			out["Error"] = err.Error()
		}
		return out
	}
	funcs["required"] = func(message string, value interface{}) (interface{}, error) {
		if value == nil || value == "" {
			return nil, fmt.Errorf("%s", message)
		}
		return value, nil
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var out bytes.Buffer
		err := templates.ExecuteTemplate(&out, name, data)
		return out.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		inline, err := templates.Clone()
		if err == nil {
			inline, err = inline.New("tpl").Parse(text)
		}
		if err != nil {
			return "", err
		}
		var out bytes.Buffer
		err = inline.ExecuteTemplate(&out, "tpl", data)
		return out.String(), err
	}
	funcs["lookup"] = func(...interface{}) values { return values{} }
	templates.Funcs(funcs)

	files, _ := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	sort.Strings(files)
	var outputs []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			fail("%v", err)
		}
		name := filepath.Join(filepath.Base(chartDir), "templates", filepath.Base(file))
		if _, err := templates.New(name).Parse(string(data)); err != nil {
			fail("%v", err)
		}
		base := filepath.Base(file)
		isNotes := base == "NOTES.txt"
		if !strings.HasPrefix(base, "_") && (isNotes == notes) {
			outputs = append(outputs, name)
		}
	}
	for _, name := range outputs {
		data := merge(values{}, root)
		data["Template"] = values{"Name": name, "BasePath": filepath.Dir(name)}
		var out bytes.Buffer
		if err := templates.ExecuteTemplate(&out, name, data); err != nil {
			fail("%v", err)
		}
		text := strings.ReplaceAll(out.String(), "<no value>", "")
		if notes {
			fmt.Print(text)
		} else if strings.TrimSpace(text) != "" {
			fmt.Printf("---\n# Source: %s\n%s\n", name, text)
		}
	}
}
