/* main.c - gpusched: dispatch to the offline commands (simulate, explain, nodes), the live
 * scheduler (serve) and version. Only argument routing lives here; each command parses its
 * own flags. Exit status: 0 success, 1 runtime failure, 2 usage error. */
#include <stdio.h>
#include <string.h>

#include "gpusched/cmd_capacity-int.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/cmd_devices-int.h"
#include "gpusched/cmd_explain-int.h"
#include "gpusched/cmd_nodes-int.h"
#include "gpusched/cmd_render-int.h"
#include "gpusched/cmd_report-int.h"
#include "gpusched/cmd_simulate-int.h"
#include "gpusched/kubectl-int.h"
#include "serve/serve.h"

#ifndef GPUSCHED_VERSION
#define GPUSCHED_VERSION "0.1.0"
#endif

static const char main_usage[] =
    "gpusched places pods the way kube-scheduler (v1.32+) does: offline on manifest files or\n"
    "on the state of a running cluster (the kubeconfig's, found as kubectl finds it:\n"
    "--kubeconfig, then $KUBECONFIG, then ~/.kube/config, then the in-cluster service\n"
    "account), or live as a secondary scheduler.\n"
    "\n"
    "Usage:\n"
    "  gpusched COMMAND [flags]\n"
    "\n"
    "Commands:\n"
    "  simulate    Schedule the pending pods onto the nodes, as kube-scheduler would\n"
    "  explain     Why a pod is pending: node by node, the filter that rejects it, or scores\n"
    "  nodes       List the nodes, with GPU labels and free GPUs\n"
    "  capacity    Count how many more copies of a pod fit, and the GPUs left stranded\n"
    "  devices     List the DRA devices of ResourceSlices, those a CEL selector matches\n"
    "  report      Write an HTML page: GPUs per node by model, pending pods by reason\n"
    "  render      Print the objects manifests expand to (workloads as their pods)\n"
    "  serve       Run as a secondary scheduler that binds pods through the API\n"
    "  version     Print the version\n"
    "  completion  Print the bash or zsh completion script\n"
    "\n"
    "The commands that print tables or JSON (simulate, explain, nodes, capacity, render)\n"
    "also take kubectl's --no-headers, -o yaml and -o name; installed as kubectl-gpusched,\n"
    "gpusched runs as `kubectl gpusched COMMAND`.\n"
    "\n"
    "Use \"gpusched COMMAND --help\" for more information about a command.\n";

static const char version_usage[] = "Print the version of gpusched.\n"
                                    "\n"
                                    "Usage:\n"
                                    "  gpusched version\n";

static int main_dispatch(int argc, char **argv)
{
    const char *cmd;

    if (argc < 2) {
        fputs(main_usage, stderr);
        return 2;
    }
    cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(main_usage, stdout);
        return 0;
    }
    gpusched_cmd_name = cmd;
    if (!strcmp(cmd, "simulate"))
        return gpusched_cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain"))
        return gpusched_cmd_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "render"))
        return gpusched_cmd_render(argc - 1, argv + 1);
    if (!strcmp(cmd, "nodes"))
        return gpusched_cmd_nodes(argc - 1, argv + 1);
    if (!strcmp(cmd, "capacity"))
        return gpusched_cmd_capacity(argc - 1, argv + 1);
    if (!strcmp(cmd, "devices"))
        return gpusched_cmd_devices(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return gpusched_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return serve_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
            fputs(version_usage, stdout);
            return 0;
        }
        if (argc > 2)
            return gpusched_cmd_usage_error("version", "unknown argument: %s", argv[2]);
        printf("gpusched %s\n", GPUSCHED_VERSION);
        return 0;
    }
    if (cmd[0] == '-')
        return gpusched_cmd_usage_error(NULL, "unknown flag: %s", cmd);
    return gpusched_cmd_usage_error(NULL, "unknown command \"%s\"", cmd);
}

int main(int argc, char **argv)
{
    return gpusched_kubectl_main(argc, argv, main_dispatch);
}
