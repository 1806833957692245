// Command render is a stand-in for `helm template` and `helm lint` where no helm binary can be
// installed (this repository's test machines): it runs Helm 3's template engine as Helm does it,
// built only from Debian's packaged Go libraries (Sprig 3, sigs.k8s.io/yaml), so the chart's
// templates are executed for real instead of being read as text.
//
// What is the same as Helm 3 (pkg/engine, pkg/chartutil, pkg/releaseutil):
//   - text/template with Sprig's TxtFuncMap minus env/expandenv, plus toYaml, fromYaml,
//     fromYamlArray, toJson, fromJson, fromJsonArray, include, tpl, required, lookup (no cluster:
//     an empty map, as `helm template` gives) and Sprig's fail;
//   - option missingkey=zero, and "<no value>" removed from the output;
//   - values read with sigs.k8s.io/yaml (numbers are float64, as in Helm), values.yaml coalesced
//     with -f files in order and --set / --set-string overrides (dotted keys; a null deletes);
//   - the top-level objects .Values, .Release (Name, Namespace, IsInstall, IsUpgrade, Revision,
//     Service), .Chart (Chart.yaml with Helm's field names: Name, Version, AppVersion, ...),
//     .Capabilities (KubeVersion.Version/Major/Minor, APIVersions.Has, HelmVersion), .Template
//     (Name, BasePath) and .Files (empty);
//   - templates named <chart>/templates/<file>; files starting with "_" are partials (parsed,
//     never output); NOTES.txt is not output;
//   - output like `helm template`: documents split on "---", each printed as
//     "---\n# Source: <template>\n<document>", ordered by Helm's install order of kinds, hooks
//     (annotation helm.sh/hook) after the other manifests;
//   - execution errors shaped like Helm's ("execution error at (<template>:<line>:<col>): <msg>").
//
// What it does not do: subcharts, values.schema.json, .Files contents, a cluster for lookup.
//
// Usage:
//
//	render template <chart-dir> [--name N] [--namespace NS] [--upgrade] [-f values.yaml]...
//	       [--set a.b=c]... [--set-string a.b=c]... [--kube-version 1.30.0]
//	render lint <chart-dir> [same flags]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	sprig "github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Metadata is Chart.yaml with the field names templates see (Helm's chart.Metadata).
type Metadata struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Maintainers  []interface{}     `json:"maintainers,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Dependencies []interface{}     `json:"dependencies,omitempty"`
	Type         string            `json:"type,omitempty"`
}

// KubeVersion mirrors chartutil.KubeVersion.
type KubeVersion struct {
	Version string
	Major   string
	Minor   string
}

func (kv KubeVersion) String() string     { return kv.Version }
func (kv KubeVersion) GitVersion() string { return kv.Version }

// VersionSet mirrors chartutil.VersionSet.
type VersionSet []string

// Has reports whether an API version (or group/version/Kind) is known.
func (v VersionSet) Has(apiVersion string) bool {
	for _, known := range v {
		if known == apiVersion {
			return true
		}
	}
	return false
}

// Capabilities mirrors chartutil.Capabilities.
type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
	HelmVersion map[string]string
}

type options struct {
	mode        string
	chartDir    string
	name        string
	namespace   string
	upgrade     bool
	valueFiles  []string
	sets        []string
	setStrings  []string
	kubeVersion string
}

func main() {
	opts, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %s\n", err)
		os.Exit(2)
	}
	switch opts.mode {
	case "template":
		out, err := renderChart(opts)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error: %s\n", err)
			os.Exit(1)
		}
		fmt.Print(out)
	case "lint":
		problems := lintChart(opts)
		if len(problems) > 0 {
			for _, problem := range problems {
				fmt.Fprintf(os.Stderr, "[ERROR] %s\n", problem)
			}
			fmt.Fprintf(os.Stderr, "Error: 1 chart(s) linted, 1 chart(s) failed\n")
			os.Exit(1)
		}
		fmt.Println("1 chart(s) linted, 0 chart(s) failed")
	default:
		fmt.Fprintf(os.Stderr, "Error: unknown mode %q (template or lint)\n", opts.mode)
		os.Exit(2)
	}
}

func parseArgs(args []string) (options, error) {
	opts := options{name: "release-name", namespace: "default", kubeVersion: "1.30.0"}
	if len(args) < 2 {
		return opts, errors.New("usage: render template|lint <chart-dir> [flags]")
	}
	opts.mode, opts.chartDir = args[0], args[1]
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		flag := rest[i]
		value := func() (string, error) {
			if i+1 >= len(rest) {
				return "", fmt.Errorf("flag %s needs a value", flag)
			}
			i++
			return rest[i], nil
		}
		var err error
		var v string
		switch flag {
		case "--upgrade":
			opts.upgrade = true
			continue
		case "--name":
			v, err = value()
			opts.name = v
		case "--namespace", "-n":
			v, err = value()
			opts.namespace = v
		case "-f", "--values":
			v, err = value()
			opts.valueFiles = append(opts.valueFiles, v)
		case "--set":
			v, err = value()
			opts.sets = append(opts.sets, v)
		case "--set-string":
			v, err = value()
			opts.setStrings = append(opts.setStrings, v)
		case "--kube-version":
			v, err = value()
			opts.kubeVersion = strings.TrimPrefix(v, "v")
		default:
			return opts, fmt.Errorf("unknown flag %q", flag)
		}
		if err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// ---------------------------------------------------------------------------------------------
// Chart loading and values

type loadedChart struct {
	meta      Metadata
	values    map[string]interface{}
	templates map[string]string // <chart>/templates/<file> -> text
}

func loadChart(dir string) (*loadedChart, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, fmt.Errorf("Chart.yaml file is missing: %w", err)
	}
	var meta Metadata
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("cannot load Chart.yaml: %w", err)
	}
	values := map[string]interface{}{}
	if raw, err := os.ReadFile(filepath.Join(dir, "values.yaml")); err == nil {
		if err := yaml.Unmarshal(raw, &values); err != nil {
			return nil, fmt.Errorf("cannot load values.yaml: %w", err)
		}
		if values == nil {
			values = map[string]interface{}{}
		}
	}
	templates := map[string]string{}
	templateDir := filepath.Join(dir, "templates")
	err = filepath.Walk(templateDir, func(file string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, file)
		text, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		templates[path.Join(meta.Name, filepath.ToSlash(rel))] = string(text)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &loadedChart{meta: meta, values: values, templates: templates}, nil
}

// coalesce merges src over dst like Helm's CoalesceTables for user values: maps merge key by
// key, anything else replaces, and a null removes the key.
func coalesce(dst, src map[string]interface{}) map[string]interface{} {
	for key, value := range src {
		if value == nil {
			delete(dst, key)
			continue
		}
		srcMap, srcIsMap := value.(map[string]interface{})
		dstMap, dstIsMap := dst[key].(map[string]interface{})
		if srcIsMap && dstIsMap {
			dst[key] = coalesce(dstMap, srcMap)
		} else {
			dst[key] = value
		}
	}
	return dst
}

// setValue applies one --set style assignment (a.b.c=value); typed scalars as Helm's strvals
// parses them (true/false, null, integers) unless asString.
func setValue(values map[string]interface{}, assignment string, asString bool) error {
	eq := strings.Index(assignment, "=")
	if eq <= 0 {
		return fmt.Errorf("--set %q: expected key=value", assignment)
	}
	keys := strings.Split(assignment[:eq], ".")
	raw := assignment[eq+1:]
	var value interface{} = raw
	if !asString {
		switch {
		case raw == "true":
			value = true
		case raw == "false":
			value = false
		case raw == "null":
			value = nil
		default:
			if n, err := strconv.ParseInt(raw, 10, 64); err == nil && (raw == "0" || !strings.HasPrefix(raw, "0")) {
				value = n
			}
		}
	}
	current := values
	for _, key := range keys[:len(keys)-1] {
		next, ok := current[key].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			current[key] = next
		}
		current = next
	}
	last := keys[len(keys)-1]
	if value == nil {
		delete(current, last)
	} else {
		current[last] = value
	}
	return nil
}

func buildValues(chart *loadedChart, opts options) (map[string]interface{}, error) {
	values := deepCopy(chart.values).(map[string]interface{})
	for _, file := range opts.valueFiles {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		user := map[string]interface{}{}
		if err := yaml.Unmarshal(raw, &user); err != nil {
			return nil, fmt.Errorf("cannot load %s: %w", file, err)
		}
		values = coalesce(values, user)
	}
	for _, assignment := range opts.sets {
		if err := setValue(values, assignment, false); err != nil {
			return nil, err
		}
	}
	for _, assignment := range opts.setStrings {
		if err := setValue(values, assignment, true); err != nil {
			return nil, err
		}
	}
	return values, nil
}

func deepCopy(value interface{}) interface{} {
	switch v := value.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(v))
		for key, item := range v {
			out[key] = deepCopy(item)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, item := range v {
			out[i] = deepCopy(item)
		}
		return out
	default:
		return v
	}
}

// ---------------------------------------------------------------------------------------------
// The engine (Helm's pkg/engine)

const warnStart, warnEnd = "HELM_ERR_START", "HELM_ERR_END"

var warnRegex = regexp.MustCompile(warnStart + `(.*)` + warnEnd)

func funcMap(t *template.Template, includeDepth map[string]int) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	extra := template.FuncMap{
		"toYaml": func(v interface{}) string {
			data, err := yaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(data), "\n")
		},
		"fromYaml": func(s string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromYamlArray": func(s string) []interface{} {
			a := []interface{}{}
			if err := yaml.Unmarshal([]byte(s), &a); err != nil {
				a = []interface{}{err.Error()}
			}
			return a
		},
		"toJson": func(v interface{}) string {
			data, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(data)
		},
		"fromJson": func(s string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromJsonArray": func(s string) []interface{} {
			a := []interface{}{}
			if err := json.Unmarshal([]byte(s), &a); err != nil {
				a = []interface{}{err.Error()}
			}
			return a
		},
		// No cluster: `helm template` answers every lookup with an empty map too.
		"lookup": func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
			return map[string]interface{}{}, nil
		},
		"include": func(name string, data interface{}) (string, error) {
			if includeDepth[name] > 1000 {
				return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
			}
			includeDepth[name]++
			defer func() { includeDepth[name]-- }()
			var buf strings.Builder
			err := t.ExecuteTemplate(&buf, name, data)
			return buf.String(), err
		},
		"tpl": func(text string, vals map[string]interface{}) (string, error) {
			clone, err := t.Clone()
			if err != nil {
				return "", err
			}
			name := "tpl"
			if tmpl, ok := vals["Template"].(map[string]interface{}); ok {
				if n, ok := tmpl["Name"].(string); ok {
					name = n + ":tpl"
				}
			}
			if _, err := clone.New(name).Parse(text); err != nil {
				return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
			}
			var buf strings.Builder
			if err := clone.ExecuteTemplate(&buf, name, vals); err != nil {
				return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
			}
			return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
		},
		"required": func(warn string, val interface{}) (interface{}, error) {
			if val == nil {
				return val, errors.New(warnStart + warn + warnEnd)
			}
			if s, ok := val.(string); ok && s == "" {
				return val, errors.New(warnStart + warn + warnEnd)
			}
			return val, nil
		},
	}
	for name, fn := range extra {
		f[name] = fn
	}
	return f
}

// renderTemplates executes every non-partial template and returns name -> output.
func renderTemplates(chart *loadedChart, values map[string]interface{}, opts options) (map[string]string, error) {
	kube := strings.SplitN(opts.kubeVersion, ".", 3)
	for len(kube) < 2 {
		kube = append(kube, "0")
	}
	top := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{
			"Name":      opts.name,
			"Namespace": opts.namespace,
			"IsInstall": !opts.upgrade,
			"IsUpgrade": opts.upgrade,
			"Revision":  1,
			"Service":   "Helm",
		},
		"Chart": chart.meta,
		"Capabilities": Capabilities{
			KubeVersion: KubeVersion{Version: "v" + opts.kubeVersion, Major: kube[0], Minor: kube[1]},
			APIVersions: VersionSet{"v1", "apps/v1", "batch/v1", "policy/v1", "networking.k8s.io/v1", "autoscaling/v2"},
			HelmVersion: map[string]string{"version": "v3-compatible-render"},
		},
		"Files": map[string]interface{}{},
	}
	t := template.New("gotpl").Option("missingkey=zero")
	t.Funcs(funcMap(t, map[string]int{}))
	names := make([]string, 0, len(chart.templates))
	for name := range chart.templates {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := t.New(name).Parse(chart.templates[name]); err != nil {
			return nil, cleanupParseError(name, err)
		}
	}
	rendered := map[string]string{}
	for _, name := range names {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue
		}
		top["Template"] = map[string]interface{}{"Name": name, "BasePath": path.Join(chart.meta.Name, "templates")}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, cleanupExecError(name, err)
		}
		rendered[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return rendered, nil
}

func cleanupParseError(name string, err error) error {
	tokens := strings.Split(err.Error(), ": ")
	if len(tokens) == 1 {
		return fmt.Errorf("parse error in (%s): %s", name, err)
	}
	return fmt.Errorf("parse error at (%s): %s", tokens[1], tokens[len(tokens)-1])
}

func cleanupExecError(name string, err error) error {
	var execErr template.ExecError
	if !errors.As(err, &execErr) {
		return err
	}
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return fmt.Errorf("execution error in (%s): %s", name, err)
	}
	if parts := warnRegex.FindStringSubmatch(tokens[2]); len(parts) >= 2 {
		return fmt.Errorf("execution error at (%s): %s", tokens[1], parts[1])
	}
	// Nested include errors keep Helm's wording for the innermost message too.
	if parts := warnRegex.FindStringSubmatch(err.Error()); len(parts) >= 2 {
		return fmt.Errorf("execution error at (%s): %s", tokens[1], parts[1])
	}
	return err
}

// ---------------------------------------------------------------------------------------------
// Manifests (Helm's pkg/releaseutil)

type manifest struct {
	source  string
	content string
	kind    string
	name    string
	hook    bool
}

var separator = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

// installOrder is releaseutil.InstallOrder.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
	"PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
	"ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding",
	"RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
}

type simpleHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   *struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func splitManifests(rendered map[string]string) ([]manifest, error) {
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []manifest
	for _, name := range names {
		for _, doc := range separator.Split(rendered[name], -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			doc = strings.TrimSpace(doc)
			var head simpleHead
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				return nil, fmt.Errorf("YAML parse error on %s: %w", name, err)
			}
			m := manifest{source: name, content: doc, kind: head.Kind}
			if head.Metadata != nil {
				m.name = head.Metadata.Name
				_, m.hook = head.Metadata.Annotations["helm.sh/hook"]
			}
			out = append(out, m)
		}
	}
	rank := map[string]int{}
	for i, kind := range installOrder {
		rank[kind] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].hook != out[j].hook {
			return !out[i].hook
		}
		ri, iKnown := rank[out[i].kind]
		rj, jKnown := rank[out[j].kind]
		switch {
		case iKnown && jKnown:
			return ri < rj
		case iKnown != jKnown:
			return iKnown
		default:
			return out[i].kind < out[j].kind
		}
	})
	return out, nil
}

func renderChart(opts options) (string, error) {
	chart, err := loadChart(opts.chartDir)
	if err != nil {
		return "", err
	}
	values, err := buildValues(chart, opts)
	if err != nil {
		return "", err
	}
	rendered, err := renderTemplates(chart, values, opts)
	if err != nil {
		return "", err
	}
	manifests, err := splitManifests(rendered)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	for _, m := range manifests {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", m.source, m.content)
	}
	return out.String(), nil
}

// ---------------------------------------------------------------------------------------------
// Lint (the parts of `helm lint` that need no cluster)

var chartName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
var semverPattern = regexp.MustCompile(`^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func lintChart(opts options) []string {
	chart, err := loadChart(opts.chartDir)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	meta := chart.meta
	if meta.APIVersion != "v2" {
		problems = append(problems, "Chart.yaml: apiVersion must be v2 (Helm 3)")
	}
	if meta.Name == "" || !chartName.MatchString(meta.Name) {
		problems = append(problems, "Chart.yaml: name is required and must be a lower-case DNS label")
	} else if abs, _ := filepath.Abs(opts.chartDir); filepath.Base(abs) != meta.Name {
		problems = append(problems, fmt.Sprintf("Chart.yaml: name %q must match the directory name", meta.Name))
	}
	if !semverPattern.MatchString(meta.Version) {
		problems = append(problems, "Chart.yaml: version is required and must be a SemVer 2 version")
	}
	if meta.Type != "" && meta.Type != "application" && meta.Type != "library" {
		problems = append(problems, "Chart.yaml: type must be application or library")
	}
	if _, err := os.Stat(filepath.Join(opts.chartDir, "values.yaml")); err != nil {
		problems = append(problems, "values.yaml file is missing")
	}
	out, err := renderChart(opts)
	if err != nil {
		return append(problems, "templates: "+err.Error())
	}
	for _, doc := range separator.Split(out, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		source := strings.TrimPrefix(strings.SplitN(doc, "\n", 2)[0], "# Source: ")
		var object map[string]interface{}
		if err := yaml.Unmarshal([]byte(doc), &object); err != nil {
			problems = append(problems, fmt.Sprintf("%s: unable to parse YAML: %s", source, err))
			continue
		}
		var head simpleHead
		_ = yaml.Unmarshal([]byte(doc), &head)
		if head.APIVersion == "" {
			problems = append(problems, source+": object has no apiVersion")
		}
		if head.Kind == "" {
			problems = append(problems, source+": object has no kind")
		}
		if head.Metadata == nil || head.Metadata.Name == "" {
			problems = append(problems, source+": object has no metadata.name")
		} else if len(head.Metadata.Name) > 253 || !regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`).MatchString(head.Metadata.Name) {
			problems = append(problems, fmt.Sprintf("%s: metadata.name %q is not a valid Kubernetes name", source, head.Metadata.Name))
		}
	}
	return problems
}
