package podhash

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	apps "k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsv1defaults "k8s.io/kubernetes/pkg/apis/apps/v1"
	"k8s.io/kubernetes/pkg/controller"
)

// src is the project root, from tests/k8s/internal/podhash.
const src = "../../../.."

// cTable reads the lines of src/manifest/podhash.c's table: the string literals between the
// markers, adjacent ones joined, one entry per trailing comma.
func cTable(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(src, "src/manifest/podhash.c"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "/* BEGIN podhash types */")
	j := strings.Index(text, "/* END podhash types */")
	if i < 0 || j < i {
		t.Fatal("podhash.c: no table markers")
	}
	lit := regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*(,?)`)
	var out []string
	cur := ""
	for _, m := range lit.FindAllStringSubmatch(text[i:j], -1) {
		cur += m[1]
		if m[2] == "," {
			out = append(out, cur)
			cur = ""
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// The C table is the Go types' field lists: a Kubernetes release that adds or moves a field
// changes the controller's hash, and this says which line to copy.
func TestTableMatchesGoTypes(t *testing.T) {
	got, want := cTable(t), Schema()
	gm := map[string]bool{}
	for _, l := range got {
		gm[l] = true
	}
	wm := map[string]bool{}
	for _, l := range want {
		wm[l] = true
		if !gm[l] {
			t.Errorf("podhash.c lacks (or has another version of) this line:\n%s", l)
		}
	}
	for _, l := range got {
		if !wm[l] {
			t.Errorf("podhash.c has a line the Go types do not:\n%s", l)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Errorf("podhash.c's table is not sorted at %q", strings.SplitN(got[i], "=", 2)[0])
		}
	}
}

// ---- templates drawn at random, hashed by the controller's own code and by gpusched

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

var quantities = []interface{}{"500m", "0.5", "1", "2", "1.5", "100m", "1000m", "2000", "1e3", "1.5e3",
	"100n", "1u", "1Ki", "1Mi", "1536Mi", "1Gi", "8Gi", "2G", "2000M", "1024", "1025", "0", "0Mi",
	"0.5Gi", "1Ti", "3Ti", 1, 2, 0, 1.5, 64, 128974848, "129e6", "129M", "123Mi", "1.1Gi"}

func resources(r *rand.Rand) map[string]interface{} {
	// valid as the API server checks them: extended resources in limits only, a request
	// only where there is no limit (it may not exceed it)
	limits, requests := map[string]interface{}{}, map[string]interface{}{}
	for _, res := range []string{"cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"} {
		switch r.Intn(3) {
		case 0:
			if res == "nvidia.com/gpu" {
				limits[res] = pick(r, interface{}("1"), 2, "4")
			} else {
				limits[res] = pick(r, quantities...)
			}
		case 1:
			if res != "nvidia.com/gpu" {
				requests[res] = pick(r, quantities...)
			}
		}
	}
	out := map[string]interface{}{}
	if len(limits) > 0 || r.Intn(4) == 0 {
		out["limits"] = limits
	}
	if len(requests) > 0 || r.Intn(4) == 0 {
		out["requests"] = requests
	}
	return out
}

func probe(r *rand.Rand) map[string]interface{} {
	p := map[string]interface{}{}
	switch r.Intn(4) {
	case 0:
		p["httpGet"] = map[string]interface{}{"port": pick(r, interface{}(8080), "http"), "path": pick(r, "", "/healthz")}
	case 1:
		p["exec"] = map[string]interface{}{"command": []string{"true"}}
	case 2:
		p["tcpSocket"] = map[string]interface{}{"port": 80}
	case 3:
		p["grpc"] = map[string]interface{}{"port": 9090}
	}
	for _, k := range []string{"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "failureThreshold"} {
		if r.Intn(3) == 0 {
			p[k] = r.Intn(20)
		}
	}
	return p
}

func container(r *rand.Rand, name string) map[string]interface{} {
	c := map[string]interface{}{
		"name":  name,
		"image": pick(r, "nginx", "nginx:latest", "nginx:1.27", "registry.k8s.io/pause:3.10", "localhost:5000/app", "ghcr.io/x/y@sha256:0123456789012345678901234567890123456789012345678901234567890123", "Bad/Image"),
	}
	if r.Intn(2) == 0 {
		c["resources"] = resources(r)
	}
	if r.Intn(3) == 0 {
		c["ports"] = []interface{}{map[string]interface{}{"containerPort": 8080, "name": "http"},
			map[string]interface{}{"containerPort": 53, "protocol": "UDP", "hostPort": pick(r, 0, 53)}}
	}
	if r.Intn(3) == 0 {
		c["env"] = []interface{}{
			map[string]interface{}{"name": "A", "value": "1"},
			map[string]interface{}{"name": "B", "valueFrom": map[string]interface{}{"fieldRef": map[string]interface{}{"fieldPath": "metadata.name"}}},
			map[string]interface{}{"name": "C", "valueFrom": map[string]interface{}{"resourceFieldRef": map[string]interface{}{"resource": "limits.cpu", "divisor": pick(r, interface{}(nil), "1m", "1")}}},
			map[string]interface{}{"name": "D", "valueFrom": map[string]interface{}{"configMapKeyRef": map[string]interface{}{"name": "cm", "key": "k", "optional": pick(r, true, false)}}},
		}
		c["envFrom"] = []interface{}{map[string]interface{}{"prefix": "X_", "secretRef": map[string]interface{}{"name": "s"}}}
	}
	if r.Intn(3) == 0 {
		c["livenessProbe"] = probe(r)
	}
	if r.Intn(4) == 0 {
		c["readinessProbe"] = probe(r)
	}
	if r.Intn(5) == 0 {
		c["lifecycle"] = map[string]interface{}{"preStop": map[string]interface{}{"httpGet": map[string]interface{}{"port": 80}}}
	}
	if r.Intn(4) == 0 {
		c["securityContext"] = map[string]interface{}{"runAsNonRoot": pick(r, true, false), "runAsUser": 1000,
			"capabilities": map[string]interface{}{"drop": []string{"ALL"}}, "readOnlyRootFilesystem": true}
	}
	if r.Intn(4) == 0 {
		c["volumeMounts"] = []interface{}{map[string]interface{}{"name": "v0", "mountPath": "/data", "readOnly": pick(r, true, false)}}
	}
	if r.Intn(5) == 0 {
		c["command"] = []string{"sh", "-c"}
		c["args"] = []string{"sleep 1", ""}
	}
	if r.Intn(6) == 0 {
		c["imagePullPolicy"] = pick(r, "Always", "Never")
	}
	return c
}

func volume(r *rand.Rand, name string) map[string]interface{} {
	v := map[string]interface{}{"name": name}
	switch r.Intn(10) {
	case 0:
	case 1:
		v["emptyDir"] = map[string]interface{}{"sizeLimit": pick(r, interface{}("1Gi"), "500Mi", "100n", 1024)}
	case 2:
		v["configMap"] = map[string]interface{}{"name": "cm", "items": []interface{}{map[string]interface{}{"key": "a", "path": "a"}}}
	case 3:
		v["secret"] = map[string]interface{}{"secretName": "s", "defaultMode": 256}
	case 4:
		v["hostPath"] = map[string]interface{}{"path": "/var/log", "type": pick(r, interface{}(nil), "Directory")}
	case 5:
		v["projected"] = map[string]interface{}{"sources": []interface{}{
			map[string]interface{}{"serviceAccountToken": map[string]interface{}{"path": "token"}},
			map[string]interface{}{"downwardAPI": map[string]interface{}{"items": []interface{}{map[string]interface{}{"path": "l", "fieldRef": map[string]interface{}{"fieldPath": "metadata.labels"}}}}}}}
	case 6:
		v["downwardAPI"] = map[string]interface{}{"items": []interface{}{map[string]interface{}{"path": "n", "fieldRef": map[string]interface{}{"fieldPath": "metadata.name"}}}}
	case 7:
		v["persistentVolumeClaim"] = map[string]interface{}{"claimName": "data"}
	case 8:
		v["ephemeral"] = map[string]interface{}{"volumeClaimTemplate": map[string]interface{}{"spec": map[string]interface{}{
			"accessModes": []string{"ReadWriteOnce"}, "resources": map[string]interface{}{"requests": map[string]interface{}{"storage": pick(r, "1Gi", "1.5Gi", "100M", "1e9", "500Mi")}}}}}
	case 9:
		v["nfs"] = map[string]interface{}{"server": "nfs", "path": "/"}
	}
	return v
}

func template(r *rand.Rand, app string) map[string]interface{} {
	md := map[string]interface{}{"labels": map[string]interface{}{"app": app}}
	if r.Intn(3) == 0 {
		md["annotations"] = map[string]interface{}{"b": "2", "a": "1", "prometheus.io/scrape": "true"}
	}
	spec := map[string]interface{}{}
	var cs []interface{}
	for i := 0; i < 1+r.Intn(2); i++ {
		cs = append(cs, container(r, fmt.Sprintf("c%d", i)))
	}
	spec["containers"] = cs
	if r.Intn(4) == 0 {
		ic := container(r, "init")
		if r.Intn(2) == 0 {
			ic["restartPolicy"] = "Always"
		}
		spec["initContainers"] = []interface{}{ic}
	}
	if r.Intn(3) == 0 {
		var vs []interface{}
		for i := 0; i < 1+r.Intn(3); i++ {
			vs = append(vs, volume(r, fmt.Sprintf("v%d", i)))
		}
		spec["volumes"] = vs
	}
	if r.Intn(3) == 0 {
		spec["nodeSelector"] = map[string]interface{}{"aliyun.accelerator/nvidia_name": "Tesla-M40", "disk": "ssd"}
	}
	if r.Intn(3) == 0 {
		spec["affinity"] = map[string]interface{}{
			"nodeAffinity": map[string]interface{}{"requiredDuringSchedulingIgnoredDuringExecution": map[string]interface{}{
				"nodeSelectorTerms": []interface{}{map[string]interface{}{"matchExpressions": []interface{}{
					map[string]interface{}{"key": "zone", "operator": "In", "values": []string{"a", "b"}}}}}}},
			"podAntiAffinity": map[string]interface{}{"preferredDuringSchedulingIgnoredDuringExecution": []interface{}{
				map[string]interface{}{"weight": 50, "podAffinityTerm": map[string]interface{}{
					"labelSelector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": app}},
					"topologyKey":   "kubernetes.io/hostname"}}}}}
	}
	if r.Intn(3) == 0 {
		spec["tolerations"] = []interface{}{map[string]interface{}{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
			map[string]interface{}{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30}}
	}
	if r.Intn(4) == 0 {
		spec["topologySpreadConstraints"] = []interface{}{map[string]interface{}{"maxSkew": 1, "topologyKey": "zone",
			"whenUnsatisfiable": "ScheduleAnyway", "labelSelector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": app}}}}
	}
	if r.Intn(4) == 0 {
		spec["securityContext"] = map[string]interface{}{"fsGroup": 2000, "runAsNonRoot": true}
	}
	if r.Intn(5) == 0 {
		spec["serviceAccountName"] = "sa"
	} else if r.Intn(5) == 0 {
		spec["serviceAccount"] = "old-sa"
	}
	if r.Intn(5) == 0 {
		spec["priorityClassName"] = "high"
	}
	if r.Intn(5) == 0 {
		spec["terminationGracePeriodSeconds"] = pick(r, 0, 60)
	}
	if r.Intn(6) == 0 {
		spec["hostNetwork"] = true
		spec["dnsPolicy"] = "ClusterFirstWithHostNet"
	}
	if r.Intn(6) == 0 {
		spec["resources"] = map[string]interface{}{"requests": map[string]interface{}{"cpu": "1", "memory": "1Gi"}}
	}
	if r.Intn(8) == 0 {
		spec["automountServiceAccountToken"] = false
		spec["enableServiceLinks"] = false
	}
	return map[string]interface{}{"metadata": md, "spec": spec}
}

// controllerHash is the hash kube-controller-manager gives the Deployment dj (JSON): decoded,
// defaulted as the API server does (apps/v1 SetObjectDefaults_Deployment), converted to the
// internal version and back as storage does, through protobuf as the controller reads it.
func controllerHash(t *testing.T, dj []byte) string {
	var d appsv1.Deployment
	if err := json.Unmarshal(dj, &d); err != nil {
		t.Fatal(err)
	}
	appsv1defaults.SetObjectDefaults_Deployment(&d)
	var in apps.Deployment
	if err := legacyscheme.Scheme.Convert(&d, &in, nil); err != nil {
		t.Fatal(err)
	}
	var back appsv1.Deployment
	if err := legacyscheme.Scheme.Convert(&in, &back, nil); err != nil {
		t.Fatal(err)
	}
	pb, err := back.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var read appsv1.Deployment
	if err := read.Unmarshal(pb); err != nil {
		t.Fatal(err)
	}
	return controller.ComputeHash(&read.Spec.Template, nil)
}

// gpuschedBinary is $GPUSCHED (make check-k8s sets it), else build/gpusched. It is stat'ed
// either way, so that go test's cache sees a rebuilt binary.
func gpuschedBinary(t *testing.T) string {
	p := os.Getenv("GPUSCHED")
	if p == "" {
		p, _ = filepath.Abs(filepath.Join(src, "build", "gpusched"))
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no gpusched at %s (make, or GPUSCHED=PATH)", p)
	}
	return p
}

// 400 Deployments of templates drawn at random: gpusched render's ReplicaSet of each must be
// named with the hash the controller's own code computes.
func TestHashIsTheControllers(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	var docs []string
	want := map[string]string{}
	for i := 0; i < 400; i++ {
		name := fmt.Sprintf("d%03d", i)
		d := map[string]interface{}{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]interface{}{"name": name, "namespace": "default"},
			"spec": map[string]interface{}{"replicas": 1, "selector": map[string]interface{}{
				"matchLabels": map[string]interface{}{"app": name}}, "template": template(r, name)}}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
		want[name] = name + "-" + controllerHash(t, b)
	}
	f := filepath.Join(dir, "deployments.json")
	class := `{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}`
	if err := os.WriteFile(f, []byte(class+"\n"+strings.Join(docs, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gpuschedBinary(t), "render", "-f", f, "-o", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gpusched render: %v: %s", err, stderr.String())
	}
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name            string `json:"name"`
				OwnerReferences []struct {
					Name string `json:"name"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range list.Items {
		if it.Kind == "ReplicaSet" && len(it.Metadata.OwnerReferences) > 0 {
			got[it.Metadata.OwnerReferences[0].Name] = it.Metadata.Name
		}
	}
	bad := 0
	for i, doc := range docs {
		name := fmt.Sprintf("d%03d", i)
		if got[name] != want[name] {
			bad++
			if bad <= 5 {
				t.Errorf("%s: gpusched %q, the controller %q; template %s", name, got[name], want[name], doc)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d Deployments differ", bad, len(docs))
	}
}
