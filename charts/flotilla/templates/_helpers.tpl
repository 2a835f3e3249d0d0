{{/* Labels of every object. No chart version: a release changes only what it must. */}}
{{- define "flotilla.labels" -}}
app.kubernetes.io/name: flotilla-hub
app.kubernetes.io/part-of: flotilla
{{- end }}

{{/* The controller's pods. The Deployment's selector is immutable: never change these. */}}
{{- define "flotilla.selectorLabels" -}}
app.kubernetes.io/name: flotilla-hub
{{- end }}

{{/* The user the controller runs as, as the API server names it. */}}
{{- define "flotilla.controllerUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:flotilla-hub
{{- end }}

{{/* The YAML documents of a generated multi-document file under files/, as maps. */}}
{{- define "flotilla.documents" -}}
{{- $docs := list }}
{{- range regexSplit "(?m)^---\\s*$" (.root.Files.Get .file) -1 }}
{{- if trim . }}
{{- $docs = append $docs (fromYaml .) }}
{{- end }}
{{- end }}
{{- toJson $docs }}
{{- end }}
