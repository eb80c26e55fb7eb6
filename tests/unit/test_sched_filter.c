/* test_sched_filter.c - the filters, one table per plugin, from Kubernetes' documented
 * semantics (research/scheduling.md §3-6): each row is a cluster, a pod and the exact answer. */
#include <stdlib.h>
#include <string.h>

#include "manifest/manifest.h"
#include "sched/sched.h"
#include "sched_tb.h"
#include "test.h"

#define N1 "n1: cpu=4000 mem=8192"
#define NH "Preemption is not helpful for scheduling"
#define NV "No preemption victims found for incoming pod"
#define NOT_HELPFUL_1 " preemption: 0/1 nodes are available: 1 " NH "."

static const struct tb_row unschedulable_rows[] = {
    {.name = "cordoned node rejects",
     .nodes = {N1 " unschedulable"},
     .pod = "cpu=100",
     .want = "0/1 nodes are available: 1 node(s) were unschedulable." NOT_HELPFUL_1},
    {.name = "toleration of node.kubernetes.io/unschedulable:NoSchedule overrides",
     .nodes = {N1 " unschedulable"},
     .pod = "cpu=100 tol:node.kubernetes.io/unschedulable:Exists:NoSchedule",
     .want = "node:n1"},
    {.name = "Equal toleration with empty value also overrides",
     .nodes = {N1 " unschedulable"},
     .pod = "cpu=100 tol:node.kubernetes.io/unschedulable:NoSchedule",
     .want = "node:n1"},
    {.name = "toleration with NoExecute effect does not override",
     .nodes = {N1 " unschedulable"},
     .pod = "cpu=100 tol:node.kubernetes.io/unschedulable:Exists:NoExecute",
     .want = "0/1 nodes are available: 1 node(s) were unschedulable." NOT_HELPFUL_1},
    {.name = "empty key Exists with empty effect overrides",
     .nodes = {N1 " unschedulable"},
     .pod = "cpu=100 tol::Exists:",
     .want = "node:n1"},
    {.name = "cordon is reported before taints",
     .nodes = {N1 " unschedulable taint:node.kubernetes.io/unschedulable:NoSchedule"},
     .pod = "cpu=100",
     .want = "0/1 nodes are available: 1 node(s) were unschedulable." NOT_HELPFUL_1},
};

static const struct tb_row nodename_rows[] = {
    {.name = "spec.nodeName must match",
     .nodes = {N1, "n2: cpu=4000 mem=8192"},
     .pod = "cpu=100 node=n2",
     .want = "node:n2"},
    {.name = "spec.nodeName of an unknown node",
     .nodes = {N1},
     .pod = "cpu=100 node=nx",
     .want =
         "0/1 nodes are available: 1 node(s) didn't match the requested node name." NOT_HELPFUL_1},
};

static const struct tb_row taint_rows[] = {
    {.name = "untolerated NoSchedule taint (v1.35+: no key or value)",
     .nodes = {N1 " taint:dedicated=gpu:NoSchedule"},
     .pod = "cpu=100",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "empty taint value, same wording",
     .nodes = {N1 " taint:node-role.kubernetes.io/control-plane:NoSchedule"},
     .pod = "cpu=100",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "NoExecute filters too",
     .nodes = {N1 " taint:node.kubernetes.io/unreachable:NoExecute"},
     .pod = "cpu=100",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "PreferNoSchedule never filters",
     .nodes = {N1 " taint:a=b:PreferNoSchedule"},
     .pod = "cpu=100",
     .want = "node:n1"},
    {.name = "Equal toleration with the same value",
     .nodes = {N1 " taint:dedicated=gpu:NoSchedule"},
     .pod = "cpu=100 tol:dedicated=gpu:NoSchedule",
     .want = "node:n1"},
    {.name = "Equal toleration with another value",
     .nodes = {N1 " taint:dedicated=gpu:NoSchedule"},
     .pod = "cpu=100 tol:dedicated=cpu:NoSchedule",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "Exists toleration ignores the value",
     .nodes = {N1 " taint:dedicated=gpu:NoSchedule"},
     .pod = "cpu=100 tol:dedicated:Exists:NoSchedule",
     .want = "node:n1"},
    {.name = "empty effect matches NoExecute",
     .nodes = {N1 " taint:dedicated=gpu:NoExecute"},
     .pod = "cpu=100 tol:dedicated=gpu:",
     .want = "node:n1"},
    {.name = "NoSchedule toleration does not match NoExecute",
     .nodes = {N1 " taint:dedicated=gpu:NoExecute"},
     .pod = "cpu=100 tol:dedicated=gpu:NoSchedule",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "empty key with Exists tolerates every taint",
     .nodes = {N1 " taint:a=1:NoSchedule taint:b:NoExecute"},
     .pod = "cpu=100 tol::Exists:",
     .want = "node:n1"},
    {.name = "empty key Exists limited to one effect",
     .nodes = {N1 " taint:a=1:NoSchedule taint:b:NoExecute"},
     .pod = "cpu=100 tol::Exists:NoSchedule",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "one untolerated taint among several is enough",
     .nodes = {N1 " taint:a=1:NoSchedule taint:b:NoExecute taint:c=3:NoSchedule"},
     .pod = "cpu=100 tol:a=1:NoSchedule",
     .want = "0/1 nodes are available: 1 node(s) had untolerated taint(s)." NOT_HELPFUL_1},
    {.name = "seed: master taints on three nodes, no GPU on the worker",
     .nodes = {"m1: cpu=4000 mem=8192 taint:node-role.kubernetes.io/master:NoSchedule",
               "m2: cpu=4000 mem=8192 taint:node-role.kubernetes.io/master:NoSchedule",
               "m3: cpu=4000 mem=8192 taint:node-role.kubernetes.io/master:NoSchedule",
               "w1: cpu=4000 mem=8192"},
     .pod = "cpu=100 gpu=1",
     .want = "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) had untolerated "
             "taint(s). preemption: 0/4 nodes are available: 4 " NH "."},
};

static const struct tb_row affinity_rows[] = {
    {.name = "nodeSelector matches",
     .nodes = {N1 " label:gpu=m40", "n2: cpu=4000 mem=8192 label:gpu=p100"},
     .pod = "cpu=100 sel:gpu=p100",
     .want = "node:n2"},
    {.name = "nodeSelector with a missing key",
     .nodes = {N1},
     .pod = "cpu=100 sel:gpu=p100",
     .want = "0/1 nodes are available: 1 node(s) didn't match Pod's node "
             "affinity/selector." NOT_HELPFUL_1},
    {.name = "In",
     .nodes = {N1 " label:zone=a", "n2: cpu=4000 mem=8192 label:zone=b"},
     .pod = "cpu=100",
     .req = {{"zone In b c"}},
     .want = "node:n2"},
    {.name = "NotIn matches a node without the key",
     .nodes = {N1 " label:zone=a", "n2: cpu=4000 mem=8192"},
     .pod = "cpu=100",
     .req = {{"zone NotIn a"}},
     .want = "node:n2"},
    {.name = "Exists",
     .nodes = {N1, "n2: cpu=4000 mem=8192 label:gpu="},
     .pod = "cpu=100",
     .req = {{"gpu Exists"}},
     .want = "node:n2"},
    {.name = "DoesNotExist (the seed's not-in-gpu-node)",
     .nodes = {N1 " label:aliyun.accelerator/nvidia_name=Tesla-M40", "n2: cpu=4000 mem=8192"},
     .pod = "cpu=100",
     .req = {{"aliyun.accelerator/nvidia_name DoesNotExist"}},
     .want = "node:n2"},
    {.name = "Gt compares integers",
     .nodes = {N1 " label:cores=8", "n2: cpu=4000 mem=8192 label:cores=16"},
     .pod = "cpu=100",
     .req = {{"cores Gt 8"}},
     .want = "node:n2"},
    {.name = "Gt is strict and a non-integer label never matches",
     .nodes = {N1 " label:cores=8", "n2: cpu=4000 mem=8192 label:cores=many"},
     .pod = "cpu=100",
     .req = {{"cores Gt 8"}},
     .want = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
             " preemption: 0/2 nodes are available: 2 " NH "."},
    {.name = "Gt with a non-integer value fails its term only",
     .nodes = {N1 " label:cores=8 label:zone=a"},
     .pod = "cpu=100",
     .req = {{"cores Gt eight"}, {"zone In a"}},
     .want = "node:n1"},
    {.name = "Lt accepts a negative number",
     .nodes = {N1 " label:t=-5", "n2: cpu=4000 mem=8192 label:t=3"},
     .pod = "cpu=100",
     .req = {{"t Lt -1"}},
     .want = "node:n1"},
    {.name = "Lt on a missing label does not match",
     .nodes = {N1},
     .pod = "cpu=100",
     .req = {{"t Lt 100"}},
     .want = "0/1 nodes are available: 1 node(s) didn't match Pod's node "
             "affinity/selector." NOT_HELPFUL_1},
    {.name = "expressions of a term are ANDed",
     .nodes = {N1 " label:a=1", "n2: cpu=4000 mem=8192 label:a=1 label:b=2"},
     .pod = "cpu=100",
     .req = {{"a In 1", "b In 2"}},
     .want = "node:n2"},
    {.name = "terms are ORed",
     .nodes = {N1 " label:a=1", "n2: cpu=4000 mem=8192 label:b=2", "n3: cpu=4000 mem=8192"},
     .pod = "cpu=100000",
     .req = {{"a In 1"}, {"b In 2"}},
     .want = "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
             "2 Insufficient cpu. preemption: 0/3 nodes are available: 3 " NH "."},
    {.name = "an empty term matches nothing",
     .nodes = {N1},
     .pod = "cpu=100",
     .req = {{"-"}},
     .want = "0/1 nodes are available: 1 node(s) didn't match Pod's node "
             "affinity/selector." NOT_HELPFUL_1},
    {.name = "nodeSelector is ANDed with required affinity",
     .nodes = {N1 " label:a=1 label:b=2", "n2: cpu=4000 mem=8192 label:a=1"},
     .pod = "cpu=100 sel:b=2",
     .req = {{"a In 1"}},
     .want = "node:n1"},
    {.name = "matchFields name pin: nodes outside the PreFilter result",
     .nodes = {N1, "n2: cpu=1000 mem=8192", "n3: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n2 cpu=800"},
     .pod = "cpu=500",
     .req = {{"field:metadata.name In n2"}},
     .want = "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) "
             "[NodeAffinity]. preemption: 0/3 nodes are available: 1 " NV ", 2 " NH "."},
    {.name = "matchFields name pin picks the node",
     .nodes = {N1, "n2: cpu=4000 mem=8192", "n3: cpu=4000 mem=8192"},
     .pod = "cpu=500",
     .req = {{"field:metadata.name In n3"}},
     .want = "node:n3"},
    {.name = "name pins union across terms, and expressions still apply",
     .nodes = {N1 " label:a=1", "n2: cpu=4000 mem=8192", "n3: cpu=4000 mem=8192"},
     .pod = "cpu=500",
     .req = {{"field:metadata.name In n1", "a In 2"}, {"field:metadata.name In n2", "a In 1"}},
     .want = "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity], "
             "2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
             "available: 3 " NH "."},
    {.name = "conflicting name pins inside one term",
     .nodes = {N1, "n2: cpu=4000 mem=8192"},
     .pod = "cpu=500",
     .req = {{"field:metadata.name In n1", "field:metadata.name In n2"}},
     /* NodeAffinity's PreFilter stops the PreFilters before DynamicResources' writes its
      * state: that plugin's PostFilter, ahead of DefaultPreemption, fails with "not found" */
     .want = "0/2 nodes are available: pod affinity terms conflict. not found"},
    {.name = "matchFields NotIn filters node by node",
     .nodes = {N1, "n2: cpu=4000 mem=8192"},
     .pod = "cpu=500",
     .req = {{"field:metadata.name NotIn n1"}},
     .want = "node:n2"},
};

static const struct tb_row ports_rows[] = {
    {.name = "same host port, TCP, any IP",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:8888"},
     .pod = "cpu=100 port:8888",
     .want = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
             "ports. preemption: 0/1 nodes are available: 1 " NV "."},
    {.name = "0.0.0.0 conflicts with a specific IP",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:8888@10.0.0.1"},
     .pod = "cpu=100 port:8888",
     .want = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
             "ports. preemption: 0/1 nodes are available: 1 " NV "."},
    {.name = "a specific IP conflicts with 0.0.0.0",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:8888"},
     .pod = "cpu=100 port:8888@10.0.0.2",
     .want = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
             "ports. preemption: 0/1 nodes are available: 1 " NV "."},
    {.name = "two different specific IPs do not conflict",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:8888@10.0.0.1"},
     .pod = "cpu=100 port:8888@10.0.0.2",
     .want = "node:n1"},
    {.name = "UDP and TCP do not conflict",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:53/UDP"},
     .pod = "cpu=100 port:53",
     .want = "node:n1"},
    {.name = "SCTP conflicts with SCTP",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:99/SCTP"},
     .pod = "cpu=100 port:99/SCTP",
     .want = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
             "ports. preemption: 0/1 nodes are available: 1 " NV "."},
    {.name = "sidecar host ports count",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 sidecarport:7000"},
     .pod = "cpu=100 port:7000",
     .want = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
             "ports. preemption: 0/1 nodes are available: 1 " NV "."},
    {.name = "regular init container host ports do not count",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 initport:7000"},
     .pod = "cpu=100 port:7000",
     .want = "node:n1"},
    {.name = "hostNetwork makes the container port a host port",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 hostnet:9100"},
     .pod = "cpu=100 port:9100",
     .want = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
             "ports. preemption: 0/1 nodes are available: 1 " NV "."},
    {.name = "a lower-priority pod holding the port is a victim",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 port:8888 prio=-1"},
     .pod = "cpu=100 port:8888",
     .want = "nominated:n1 victims:x/a | 0/1 nodes are available: 1 node(s) didn't have free "
             "ports for the requested pod ports."
             " preemption: found a potential placement for pod on node n1, preempting 1 victims"},
};

static const struct tb_row fit_rows[] = {
    /* A node's requested sums saturate at INT64_MAX instead of wrapping: two bound pods of
     * 2^63-1 GPUs each fill an 8-GPU node (kube-scheduler's int64 sums wrap to -2 there and
     * show the node as having 10 free: a deliberate difference, docs/scheduling.md). */
    {.name = "node GPU sums saturate, never wrap",
     .nodes = {"n1: cpu=4000 mem=8192 gpu=8"},
     .bound = {"name=x/a node=n1 gpu=9223372036854775807",
               "name=x/b node=n1 gpu=9223372036854775807"},
     .pod = "cpu=100 gpu=1",
     .want = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are "
             "available: 1 " NV "."},
    {.name = "node extended-resource sums saturate, never wrap",
     .nodes = {"n1: cpu=4000 mem=8192 scalar:example.com/fpga=8"},
     .bound = {"name=x/a node=n1 scalar:example.com/fpga=9223372036854775807",
               "name=x/b node=n1 scalar:example.com/fpga=9223372036854775807"},
     .pod = "cpu=100 scalar:example.com/fpga=1",
     .want = "0/1 nodes are available: 1 Insufficient example.com/fpga. preemption: 0/1 nodes "
             "are available: 1 " NV "."},
    {.name = "node cpu sums saturate, never wrap",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 cpu=9223372036854775807",
               "name=x/b node=n1 cpu=9223372036854775807"},
     .pod = "cpu=100",
     .want = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
             "available: 1 " NV "."},
    {.name = "preemption with saturated sums: a huge pod that stays keeps the node full",
     .nodes = {"n1: cpu=4000 mem=8192 gpu=8"},
     .bound = {"name=x/a node=n1 gpu=9223372036854775807 prio=20",
               "name=x/b node=n1 gpu=9223372036854775807"},
     .pod = "cpu=100 gpu=1 prio=10",
     .want = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are "
             "available: 1 Insufficient nvidia.com/gpu."},
    {.name = "preemption with saturated sums: both huge pods go",
     .nodes = {"n1: cpu=4000 mem=8192 gpu=8"},
     .bound = {"name=x/a node=n1 gpu=9223372036854775807",
               "name=x/b node=n1 gpu=9223372036854775807"},
     .pod = "cpu=100 gpu=1 prio=10",
     .want = "nominated:n1 victims:x/a,x/b | 0/1 nodes are available: 1 Insufficient "
             "nvidia.com/gpu. preemption: found a potential placement for pod on node n1, "
             "preempting 2 victims"},
    {.name = "Too many pods is checked even for an empty pod",
     .nodes = {N1 " pods=1"},
     .bound = {"name=x/a node=n1"},
     .pod = "",
     .want = "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 " NV
             "."},
    {.name = "a pod with zero requests fits an overcommitted node",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 cpu=9000 mem=9000"},
     .pod = "cpu=0 mem=0",
     .want = "node:n1"},
    {.name = "every insufficient resource is counted",
     .nodes = {N1, "n2: cpu=4000 mem=100"},
     .bound = {"name=x/a node=n1 cpu=3900"},
     .pod = "cpu=200 mem=200",
     .want = "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/2 "
             "nodes are available: 1 " NV ", 1 " NH "."},
    {.name = "a node without the GPU resource",
     .nodes = {N1, "n2: cpu=4000 mem=8192 gpu=1"},
     .bound = {"name=x/a node=n2 gpu=1"},
     .pod = "cpu=100 gpu=1",
     .want = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are "
             "available: 1 " NV ", 1 " NH "."},
    {.name = "init containers: the max of init and the sum of containers",
     .nodes = {N1},
     .pod = "cpu=1000 init:cpu=4001",
     .want = "0/1 nodes are available: 1 Insufficient cpu." NOT_HELPFUL_1},
    {.name = "init container request below the sum",
     .nodes = {N1},
     .pod = "cpu=2000 c2:cpu=2000 init:cpu=3000",
     .want = "node:n1"},
    {.name = "sidecars add to the sum",
     .nodes = {N1},
     .pod = "cpu=2000 sidecar:cpu=2001",
     .want = "0/1 nodes are available: 1 Insufficient cpu." NOT_HELPFUL_1},
    {.name = "an init container after a sidecar needs both",
     .nodes = {N1},
     .pod = "cpu=100 sidecar:cpu=2000 init:cpu=2001",
     .want = "0/1 nodes are available: 1 Insufficient cpu." NOT_HELPFUL_1},
    {.name = "an init container before a sidecar does not add it",
     .nodes = {N1},
     .pod = "cpu=100 init:cpu=3800 sidecar:cpu=150",
     .want = "node:n1"},
    {.name = "overhead is added",
     .nodes = {N1},
     .pod = "cpu=3900 ovh:cpu=101",
     .want = "0/1 nodes are available: 1 Insufficient cpu." NOT_HELPFUL_1},
    {.name = "fits exactly",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 cpu=3000"},
     .pod = "cpu=1000 mem=8192",
     .want = "node:n1"},
    {.name = "extended resource other than GPUs",
     .nodes = {N1 " scalar:example.com/foo=2"},
     .bound = {"name=x/a node=n1 scalar:example.com/foo=2"},
     .pod = "cpu=100 scalar:example.com/foo=1",
     .want = "0/1 nodes are available: 1 Insufficient example.com/foo. preemption: 0/1 nodes are "
             "available: 1 " NV "."},
    {.name = "ephemeral storage",
     .nodes = {N1 " eph=100"},
     .pod = "cpu=100 eph=50",
     .want = "node:n1"},
    {.name = "ephemeral storage over allocatable is unresolvable",
     .nodes = {N1 " eph=100"},
     .pod = "cpu=100 eph=150",
     .want = "0/1 nodes are available: 1 Insufficient ephemeral-storage." NOT_HELPFUL_1},
    {.name = "succeeded pods hold nothing",
     .nodes = {N1},
     .bound = {"name=x/a node=n1 cpu=4000 phase=Succeeded"},
     .pod = "cpu=1000",
     .want = "node:n1"},
};

static const struct tb_row order_rows[] = {
    {.name = "each node reports only its first failing filter",
     .nodes = {N1 " unschedulable taint:a:NoSchedule label:x=1",
               "n2: cpu=10 mem=8192 taint:a:NoSchedule", "n3: cpu=10 mem=8192 label:y=1",
               "n4: cpu=10 mem=8192 label:x=1"},
     .bound = {"name=x/a node=n4 port:80"},
     .pod = "cpu=100 sel:x=1 port:80",
     .want =
         "0/4 nodes are available: 1 node(s) didn't have free ports for the requested pod "
         "ports, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated "
         "taint(s), 1 node(s) were unschedulable. preemption: 0/4 nodes are available: 1 " NV
         ", 3 " NH "."},
    {.name = "gated pods are not attempted",
     .nodes = {N1},
     .pod = "cpu=100 gated",
     .want = "gated"},
    {.name = "no nodes", .pod = "cpu=100", .want = "no nodes available to schedule pods"},
};

/* the seed's manifests through the real decoder: limits-only GPU requests (request = limit by
 * API defaulting), hostPort and nodeSelector on the aliyun labels, DoesNotExist */
static const char seed_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels:\n"
    "    aliyun.accelerator/nvidia_name: Tesla-M40\n    aliyun.accelerator/nvidia_count: '1'\n"
    "status:\n  allocatable: {cpu: '4', memory: 16Gi, pods: '110', nvidia.com/gpu: '1'}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: cpu-1\n"
    "status:\n  allocatable: {cpu: '4', memory: 16Gi, pods: '110'}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: tf-1}\nspec:\n"
    "  nodeSelector: {aliyun.accelerator/nvidia_name: Tesla-M40}\n  containers:\n"
    "  - name: tf\n    image: tf\n    ports: [{containerPort: 8888, hostPort: 8888}]\n"
    "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: tf-2}\nspec:\n"
    "  nodeSelector: {aliyun.accelerator/nvidia_name: Tesla-M40}\n  containers:\n"
    "  - name: tf\n    image: tf\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: not-in-gpu-node}\nspec:\n"
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n        - matchExpressions:\n"
    "          - {key: aliyun.accelerator/nvidia_name, operator: DoesNotExist}\n"
    "  containers:\n  - name: c\n    image: busybox\n    resources: {limits: {cpu: '3', memory: "
    "1Gi}}\n";

static void seed_manifests(void)
{
    struct manifest_input in;
    struct err err = {0};
    struct sched_cluster *c = sched_cluster_new();
    const struct kube_pod *pods[8];
    struct sched_result res[8];
    size_t i, n = 0;

    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "seed.yaml", seed_yaml, strlen(seed_yaml), &err),
                 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    for (i = 0; i < in.nnodes; i++)
        CHECK_INT_EQ(sched_cluster_add_node(c, &in.nodes[i], &err), 0);
    for (i = 0; i < in.npods && n < 8; i++)
        pods[n++] = &in.pods[i];
    CHECK_INT_EQ(n, 3);
    CHECK_INT_EQ(sched_simulate(c, NULL, pods, n, NULL, res, &err), 0);
    if (n == 3) {
        CHECK_STR_EQ(res[0].node, "gpu-1");
        CHECK_STR_EQ(
            res[1].message,
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No "
            "preemption victims found for incoming pod, 1 Preemption is not helpful for "
            "scheduling.");
        CHECK_STR_EQ(res[2].node, "cpu-1");
        for (i = 0; i < n; i++)
            sched_result_release(&res[i]);
    }
    sched_cluster_free(c);
    manifest_input_release(&in);
}

static void unschedulable(void)
{
    TB_RUN(unschedulable_rows);
}
static void nodename(void)
{
    TB_RUN(nodename_rows);
}
static void taints(void)
{
    TB_RUN(taint_rows);
}
static void affinity(void)
{
    TB_RUN(affinity_rows);
}
static void ports(void)
{
    TB_RUN(ports_rows);
}
static void fit(void)
{
    TB_RUN(fit_rows);
}
static void order(void)
{
    TB_RUN(order_rows);
}

/* A saturated sum says nothing about what it held: taking a pod away recounts the node. */
static void saturated_sums_recount_on_removal(void)
{
    static const char *const nodes[] = {"n1: cpu=4000 mem=8192 gpu=8", NULL};
    static const char *const bound[] = {"name=x/a node=n1 gpu=9223372036854775807",
                                        "name=x/b node=n1 gpu=9223372036854775807",
                                        "name=x/c node=n1 gpu=3", NULL};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c;
    struct sched_node_usage u;

    c = tb_cluster(&a, nodes, bound);
    CHECK_INT_EQ(sched_cluster_node_usage(c, "n1", &u), 0);
    CHECK_INT_EQ(u.requested_gpu, INT64_MAX);
    CHECK_INT_EQ(sched_cluster_remove_pod(c, "x", "a"), 0);
    CHECK_INT_EQ(sched_cluster_node_usage(c, "n1", &u), 0);
    CHECK_INT_EQ(u.requested_gpu, INT64_MAX);
    CHECK(strstr(tb_schedule(c, NULL, tb_pod(&a, "cpu=100 gpu=1")), "Insufficient nvidia.com/gpu"));
    CHECK_INT_EQ(sched_cluster_remove_pod(c, "x", "b"), 0);
    CHECK_INT_EQ(sched_cluster_node_usage(c, "n1", &u), 0);
    CHECK_INT_EQ(u.requested_gpu, 3);
    CHECK_INT_EQ(u.npods, 1);
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "cpu=100 gpu=5")), "node:n1");
    sched_cluster_free(c);
    arena_release(&a);
}

static const struct test_case cases[] = {
    {"NodeUnschedulable", unschedulable},
    {"NodeName", nodename},
    {"TaintToleration", taints},
    {"NodeAffinity and nodeSelector", affinity},
    {"NodePorts", ports},
    {"NodeResourcesFit", fit},
    {"saturated node sums recount when a pod goes", saturated_sums_recount_on_removal},
    {"filter order, gates, empty cluster", order},
    {"seed manifests through the decoder (limits-only GPU, hostPort, DoesNotExist)",
     seed_manifests},
};
TEST_SUITE(sched_filter, cases)
