//go:build tools

// Package tools pins the upstream commands that `make k8s` builds from this module.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"

	// helm, for tests/integration/test_k8s_helm.py (helm lint/template of deploy/helm/gpulabel)
	_ "helm.sh/helm/v4/cmd/helm"
)
