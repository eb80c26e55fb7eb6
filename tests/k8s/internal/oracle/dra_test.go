package oracle

import (
	"context"
	"testing"

	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/report"
)

// DynamicResources in the oracle: a template's claim made as the resource-claim controller
// makes it (its name is the contract with gpusched), the devices of each bound pod, the claim
// kube-scheduler creates for nvidia.com/gpu served by a DeviceClass, the devices one pod took
// not given to the next, and a pod whose template does not exist never attempted.
func TestDynamicResources(t *testing.T) {
	c, err := objects.Load([]string{"testdata/dra.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), c, Options{PercentageOfNodesToScore: 100, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	got := report.Compact(res.Simulate())
	want := `{"scheduled":[` +
		`{"pod":"default/tf-claim","node":"gpu-1","claims":[{"claim":"default/tf-claim-gpu-fvt5p","request":"gpu","driver":"gpu.nvidia.com","pool":"gpu-1","device":"gpu-0"}]},` +
		`{"pod":"default/tf-notebook","node":"gpu-1","claims":[{"claim":"default/tf-notebook-extended-resources-j4g8b","request":"container-0-request-0","driver":"gpu.nvidia.com","pool":"gpu-1","device":"gpu-1"}]}],` +
		`"unschedulable":[{"pod":"default/late","message":"0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}],` +
		`"gated":[{"pod":"default/no-template"}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, o := range res.Outcomes {
		if o.Gated && o.GatedBy != "DynamicResources" {
			t.Errorf("%s gated by %q", Key(o.Pod), o.GatedBy)
		}
	}
}

// GeneratedName: deterministic, cut to 58 characters before the suffix, the next attempt
// when a name is taken; the controller's generateName cuts pod and claim names in proportion.
func TestGeneratedNames(t *testing.T) {
	free := func(string) bool { return false }
	a := GeneratedName("default", "tf-claim-gpu-", free)
	if a != "tf-claim-gpu-fvt5p" || GeneratedName("default", "tf-claim-gpu-", free) != a {
		t.Fatalf("name %q", a)
	}
	b := GeneratedName("default", "tf-claim-gpu-", func(n string) bool { return n == a })
	if b == a || len(b) != len(a) {
		t.Fatalf("second name %q", b)
	}
	if GeneratedName("other", "tf-claim-gpu-", free) == a {
		t.Fatal("the namespace is part of the hash")
	}
	long := GeneratedName("default", "x123456789x123456789x123456789x123456789x123456789x123456789x", free)
	if len(long) != 63 {
		t.Fatalf("long name %q (%d)", long, len(long))
	}
	if got := TemplateClaimGenerateName("pod", "claim"); got != "pod-claim-" {
		t.Fatalf("short %q", got)
	}
	pod := "a-pod-name-that-is-rather-long-indeed-0123456789"
	if got := TemplateClaimGenerateName(pod, "gpu-claim-0123456789"); got != "a-pod-name-that-is-rather-long-indeed-0-gpu-claim-012345" {
		t.Fatalf("long %q", got)
	}
}
