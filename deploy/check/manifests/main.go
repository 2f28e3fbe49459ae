// Command manifests validates Kubernetes manifests offline with the API
// server's own code, as `kubectl apply --dry-run=server` would without a
// cluster: strict decoding (unknown or duplicate fields are errors),
// defaulting, conversion to the internal types, then the create path
// (rest.BeforeCreate with each resource's registry strategy: generated
// selectors, system fields, validation) in namespace "default" on a
// cluster that allows privileged pods (kube-apiserver's default).
//
// For every pod template it prints the QoS class and, per container,
// whether the kubelet's static CPU manager would give it CPUs of its own
// (Guaranteed QoS and an integer CPU request), and fails unless each
// container running the rtload image gets them.
//
//	cd deploy/check/manifests && go run . ../../kubernetes/*.yaml
//
// A module of its own, so that rtload's go.mod does not carry Kubernetes.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/helper/qos"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/capabilities"
	dsregistry "k8s.io/kubernetes/pkg/registry/apps/daemonset"
	jobregistry "k8s.io/kubernetes/pkg/registry/batch/job"
	pvcregistry "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: manifests FILE.yaml...")
		os.Exit(2)
	}
	capabilities.Setup(true, 0) // --allow-privileged=true
	bad := 0
	for _, file := range os.Args[1:] {
		bad += checkFile(file)
	}
	if bad > 0 {
		fmt.Printf("%d invalid documents\n", bad)
		os.Exit(1)
	}
}

// checkFile checks every YAML document of file and returns how many are
// invalid.
func checkFile(file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	ser := json.NewSerializerWithOptions(json.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	bad := 0
	for doc := 1; ; doc++ {
		b, err := r.Read()
		if errors.Is(err, io.EOF) {
			return bad
		} else if err != nil {
			fmt.Printf("%s doc %d: %v\n", file, doc, err)
			return bad + 1
		}
		if onlyComments(b) {
			continue
		}
		obj, gvk, err := ser.Decode(b, nil, nil)
		if err != nil {
			fmt.Printf("%s doc %d: decode: %v\n", file, doc, err)
			bad++
			continue
		}
		name := fmt.Sprintf("%s doc %d (%s %s)", file, doc, gvk.Kind, name(obj))
		if err := check(obj); err != nil {
			fmt.Printf("%s: %v\n", name, err)
			bad++
			continue
		}
		fmt.Printf("%s: valid\n", name)
	}
}

func name(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetName()
	}
	return "?"
}

// check defaults obj, converts it to the internal version and runs the
// API server's create path on it, then the CPU checks of its pod template.
func check(obj runtime.Object) error {
	scheme := legacyscheme.Scheme
	scheme.Default(obj)
	internal, err := scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	info := &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "create", APIVersion: "v1", Namespace: "default"}
	var strategy rest.RESTCreateStrategy
	var spec func() *core.PodSpec
	switch o := internal.(type) {
	case *batch.Job:
		strategy, info.APIGroup, info.Resource = jobregistry.Strategy, "batch", "jobs"
		spec = func() *core.PodSpec { return &o.Spec.Template.Spec }
	case *apps.DaemonSet:
		strategy, info.APIGroup, info.Resource = dsregistry.Strategy, "apps", "daemonsets"
		spec = func() *core.PodSpec { return &o.Spec.Template.Spec }
	case *core.Pod:
		strategy, info.Resource = podregistry.Strategy, "pods"
		spec = func() *core.PodSpec { return &o.Spec }
	case *core.PersistentVolumeClaim:
		strategy, info.Resource = pvcregistry.Strategy, "persistentvolumeclaims"
	default:
		return fmt.Errorf("no registry strategy for %T in this checker", internal)
	}
	ctx := genericapirequest.WithRequestInfo(genericapirequest.WithNamespace(context.Background(), "default"), info)
	m, err := meta.Accessor(internal)
	if err != nil {
		return err
	}
	rest.FillObjectMetaSystemFields(m) // uid, creationTimestamp: the create handler sets them
	if err := rest.BeforeCreate(strategy, ctx, internal); err != nil {
		return err
	}
	if spec == nil {
		return nil
	}
	return checkCPUs(spec())
}

// checkCPUs prints the pod's QoS class and each container's CPU standing,
// and fails when a container running the rtload image would not get CPUs
// of its own from the static CPU manager.
func checkCPUs(spec *core.PodSpec) error {
	class := qos.GetPodQOS(&core.Pod{Spec: *spec})
	fmt.Printf("  QoS class %s\n", class)
	var errs []error
	for _, c := range append(append([]core.Container{}, spec.InitContainers...), spec.Containers...) {
		cpu := c.Resources.Requests[core.ResourceCPU]
		exclusive := class == core.PodQOSGuaranteed && cpu.MilliValue()%1000 == 0
		sc := c.SecurityContext
		privileged := sc != nil && sc.Privileged != nil && *sc.Privileged
		var add []core.Capability
		if sc != nil && sc.Capabilities != nil {
			add = sc.Capabilities.Add
		}
		fmt.Printf("  container %s: cpu %s, exclusive CPUs under the static CPU manager: %v, privileged: %v, capabilities added: %v\n",
			c.Name, cpu.String(), exclusive, privileged, add)
		if strings.Contains(c.Image, "rtload") && !exclusive {
			errs = append(errs, fmt.Errorf("container %s (%s) gets no CPUs of its own: QoS %s, cpu request %s (want Guaranteed and an integer)", c.Name, c.Image, class, cpu.String()))
		}
	}
	return errors.Join(errs...)
}

// onlyComments reports whether a YAML document holds nothing but comments
// and blank lines.
func onlyComments(b []byte) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			return false
		}
	}
	return true
}
