{{/* The namespace of every namespaced object: the release's (helm -n NS), unless the
     deprecated value namespace names another. */}}
{{- define "gpulabel.namespace" -}}
{{- .Values.namespace | default .Release.Namespace -}}
{{- end -}}

{{- define "gpulabel.labelerName" -}}
{{- printf "%sgpulabel" .Values.namePrefix -}}
{{- end -}}

{{- define "gpulabel.schedName" -}}
{{- printf "%sgpusched" .Values.namePrefix -}}
{{- end -}}

{{- define "gpulabel.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* Labels of every object; selectors use name and instance only (they are immutable). */}}
{{- define "gpulabel.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "gpulabel.selector" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* Bad values fail `helm template`/`helm install` with one line rather than a pod that
     crash-loops on a flag error. */}}
{{- define "gpulabel.validate" -}}
{{- range .Values.gpulabel.schemas -}}
{{- if not (has . (list "ack" "gfd")) -}}
{{- fail (printf "gpulabel.schemas: unknown schema %q (want ack and/or gfd)" .) -}}
{{- end -}}
{{- end -}}
{{- if not .Values.gpulabel.schemas -}}
{{- fail "gpulabel.schemas: empty (want ack and/or gfd)" -}}
{{- end -}}
{{- if not (has .Values.gpulabel.migStrategy (list "none" "single" "mixed")) -}}
{{- fail (printf "gpulabel.migStrategy: %q (want none, single or mixed)" .Values.gpulabel.migStrategy) -}}
{{- end -}}
{{- if not (has (.Values.gpulabel.loggingFormat | default "text") (list "text" "json")) -}}
{{- fail (printf "gpulabel.loggingFormat: %q (want text or json)" .Values.gpulabel.loggingFormat) -}}
{{- end -}}
{{- if not (has (.Values.gpulabel.mode | default "device-plugin") (list "device-plugin" "dra" "auto")) -}}
{{- fail (printf "gpulabel.mode: %q (want device-plugin, dra or auto)" .Values.gpulabel.mode) -}}
{{- end -}}
{{- if not (has (.Values.gpusched.loggingFormat | default "text") (list "text" "json")) -}}
{{- fail (printf "gpusched.loggingFormat: %q (want text or json)" .Values.gpusched.loggingFormat) -}}
{{- end -}}
{{- if not (has .Values.gpusched.profile (list "default" "gpu")) -}}
{{- fail (printf "gpusched.profile: %q (want default or gpu)" .Values.gpusched.profile) -}}
{{- end -}}
{{- end -}}

{{/* Whether gpulabel may run in DRA mode on some node (gpulabel.mode dra or auto). */}}
{{- define "gpulabel.dra" -}}
{{- if has (.Values.gpulabel.mode | default "device-plugin") (list "dra" "auto") -}}true{{- end -}}
{{- end -}}

{{/* gpulabel.nodeAffinity renders gpulabel.nodeAffinity; with op (In, NotIn) every required
     term also asks the node's nvidia.com/gpu.deploy.dra-driver label to be (In) or not to be
     (NotIn) "true": mode auto runs gpulabel-dra on the nodes so labelled and gpulabel on the
     others, as the GPU Operator selects its DaemonSets' nodes. */}}
{{- define "gpulabel.nodeAffinity" -}}
{{- $aff := deepCopy (.root.Values.gpulabel.nodeAffinity | default dict) -}}
{{- if .op -}}
{{- $expr := dict "key" "nvidia.com/gpu.deploy.dra-driver" "operator" .op "values" (list "true") -}}
{{- $req := $aff.requiredDuringSchedulingIgnoredDuringExecution | default dict -}}
{{- $terms := list -}}
{{- range ($req.nodeSelectorTerms | default (list dict)) -}}
{{- $t := deepCopy . -}}
{{- $_ := set $t "matchExpressions" (append ($t.matchExpressions | default list) $expr) -}}
{{- $terms = append $terms $t -}}
{{- end -}}
{{- $_ := set $req "nodeSelectorTerms" $terms -}}
{{- $_ := set $aff "requiredDuringSchedulingIgnoredDuringExecution" $req -}}
{{- end -}}
{{- if $aff -}}{{- toYaml $aff -}}{{- end -}}
{{- end -}}
