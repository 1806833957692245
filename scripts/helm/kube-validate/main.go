// Command kube-validate reads Kubernetes manifests (YAML documents, as `helm template` prints
// them) on standard input and decodes each built-in kind strictly, as the API server's strict
// field validation does (`kubectl apply --validate=strict`): an unknown or duplicated field is an
// error. Kinds client-go does not know (custom resources) are reported as skipped. One JSON line
// per document: {"kind", "name", "error"?, "skipped"?}. Exit status 0 even when a document fails.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

type result struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Error   string `json:"error,omitempty"`
	Skipped bool   `json:"skipped,omitempty"`
}

func main() {
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(os.Stdin))
	out := json.NewEncoder(os.Stdout)
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "kube-validate:", err)
			os.Exit(2)
		}
		if strings.TrimSpace(stripComments(string(doc))) == "" {
			continue
		}
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		r := result{}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			r.Error = err.Error()
		} else {
			r.Kind, r.Name = head.Kind, head.Metadata.Name
			if _, _, err := decoder.Decode(doc, nil, nil); err != nil {
				if runtime.IsNotRegisteredError(err) {
					r.Skipped = true
				} else {
					r.Error = err.Error()
				}
			}
		}
		if err := out.Encode(r); err != nil {
			os.Exit(2)
		}
	}
}

func stripComments(doc string) string {
	var kept []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}
