package main

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

// k8sDir holds the Kubernetes manifests (kustomize).
const k8sDir = "deploy/kubernetes"

// k8sObject is what the test reads of a Kubernetes object; each kind uses its part of Spec.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Replicas int      `yaml:"replicas"`
		Selector selector `yaml:"selector"`
		Strategy struct {
			RollingUpdate struct {
				MaxUnavailable *int `yaml:"maxUnavailable"`
			} `yaml:"rollingUpdate"`
		} `yaml:"strategy"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		// Service
		Ports []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		// PodDisruptionBudget
		MaxUnavailable *int `yaml:"maxUnavailable"`
		MinAvailable   *int `yaml:"minAvailable"`
		// PersistentVolumeClaim
		AccessModes []string `yaml:"accessModes"`
	} `yaml:"spec"`
}

// selector is a label selector: a Service's plain labels or a workload's matchLabels.
type selector map[string]string

func (s *selector) UnmarshalYAML(n *yaml.Node) error {
	var workload struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	if err := n.Decode(&workload); err == nil && workload.MatchLabels != nil {
		*s = workload.MatchLabels
		return nil
	}
	var plain map[string]string
	err := n.Decode(&plain)
	*s = plain
	return err
}

// podSpec is what the test reads of a pod template.
type podSpec struct {
	TerminationGracePeriodSeconds int    `yaml:"terminationGracePeriodSeconds"`
	EnableServiceLinks            *bool  `yaml:"enableServiceLinks"`
	RestartPolicy                 string `yaml:"restartPolicy"`
	SecurityContext               struct {
		RunAsNonRoot bool `yaml:"runAsNonRoot"`
		RunAsUser    int  `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
	Volumes    []struct {
		Name                  string `yaml:"name"`
		PersistentVolumeClaim *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
		EmptyDir *struct{} `yaml:"emptyDir"`
		Secret   *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
	} `yaml:"volumes"`
}

// container is what the test reads of a container.
type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	EnvFrom []struct {
		ConfigMapRef struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	StartupProbe   *probe `yaml:"startupProbe"`
	Lifecycle      struct {
		PreStop struct {
			Exec struct {
				Command []string `yaml:"command"`
			} `yaml:"exec"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// probe is an HTTP probe.
type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	TimeoutSeconds int `yaml:"timeoutSeconds"`
}

// env is the container's environment: its ConfigMaps' data, then its own variables.
func (c container) env(t *testing.T, configMaps map[string]map[string]string) map[string]string {
	env := map[string]string{}
	for _, ef := range c.EnvFrom {
		cm, ok := configMaps[ef.ConfigMapRef.Name]
		if !ok {
			t.Fatalf("container %s: no ConfigMap %s", c.Name, ef.ConfigMapRef.Name)
		}
		maps.Copy(env, cm)
	}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

// mountOf is the volume mounted at dir, "" when none is.
func (c container) mountOf(dir string) string {
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) == path.Clean(dir) {
			return m.Name
		}
	}
	return ""
}

// kustomization is what the test reads of kustomization.yaml.
type kustomization struct {
	Namespace string   `yaml:"namespace"`
	Resources []string `yaml:"resources"`
	Images    []struct {
		Name string `yaml:"name"`
	} `yaml:"images"`
}

// readManifests reads kustomization.yaml's resources, each file once and every file of the
// folder listed, as objects by kind.
func readManifests(t *testing.T) (kust kustomization, byKind map[string][]k8sObject) {
	if err := yaml.Unmarshal(must(os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))), &kust); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	var want []string
	for _, f := range files {
		checkReadmeRefs(t, f)
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	if got := slices.Sorted(slices.Values(kust.Resources)); !slices.Equal(got, want) {
		t.Errorf("kustomization resources %v, files %v", got, want)
	}
	byKind = map[string][]k8sObject{}
	for _, f := range kust.Resources {
		dec := yaml.NewDecoder(bytes.NewReader(must(os.ReadFile(filepath.Join(k8sDir, f)))))
		for {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	return kust, byKind
}

// one is the only object of kind.
func one(t *testing.T, byKind map[string][]k8sObject, kind string) k8sObject {
	if len(byKind[kind]) != 1 {
		t.Fatalf("want one %s, got %d", kind, len(byKind[kind]))
	}
	return byKind[kind][0]
}

// subset reports whether every label of sel is in labels (a selector that selects them).
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// TestKubernetesManifests: the manifests in deploy/kubernetes run the image's servers as
// several replicas on one ReadWriteMany volume, with a configuration the server accepts
// without a warning, probes on the routes that mean liveness and readiness, a stop that
// lets the longest command finish, a disruption budget, the migration Job, secrets as files,
// and a locked-down, resource-bounded container; no namespace is fixed.
func TestKubernetesManifests(t *testing.T) {
	kust, byKind := readManifests(t)
	if kust.Namespace != "" || len(byKind["Namespace"]) > 0 {
		t.Error("the manifests fix a namespace")
	}
	configMaps := map[string]map[string]string{}
	for _, objs := range byKind {
		for _, o := range objs {
			if o.Metadata.Namespace != "" {
				t.Errorf("%s %s fixes namespace %s", o.Kind, o.Metadata.Name, o.Metadata.Namespace)
			}
			if o.Kind == "ConfigMap" {
				configMaps[o.Metadata.Name] = o.Data
			}
		}
	}
	named := false
	for _, i := range kust.Images {
		named = named || i.Name == imageName
	}
	if !named {
		t.Errorf("kustomization.yaml has no images entry %s (where the registry is named)", imageName)
	}

	dep, svc, pdb, pvc, job := one(t, byKind, "Deployment"), one(t, byKind, "Service"),
		one(t, byKind, "PodDisruptionBudget"), one(t, byKind, "PersistentVolumeClaim"), one(t, byKind, "Job")
	pod := dep.Spec.Template.Spec
	labels := dep.Spec.Template.Metadata.Labels
	if dep.Spec.Replicas < 2 || !subset(dep.Spec.Selector, labels) {
		t.Errorf("Deployment: %d replicas, selector %v of %v", dep.Spec.Replicas, dep.Spec.Selector, labels)
	}
	if mu := dep.Spec.Strategy.RollingUpdate.MaxUnavailable; mu == nil || *mu != 0 {
		t.Error("Deployment: a rolling update must start a new replica before it stops an old one (maxUnavailable: 0)")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment: %d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := c.env(t, configMaps)
	cfg := containerValves(t, "Deployment", env)
	if env["FILESHED_STATE_DRIVER"] != "postgres" {
		t.Error("Deployment: several replicas need state.driver postgres")
	}
	if c.Image != imageName || len(c.Ports) != 1 || c.Ports[0].ContainerPort != imagePort(t) {
		t.Errorf("Deployment: image %s ports %+v, want %s listening on %d", c.Image, c.Ports, imageName, imagePort(t))
	}
	// The Service and the budget select the servers, and the Service reaches their port.
	if !subset(svc.Spec.Selector, labels) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != c.Ports[0].Name {
		t.Errorf("Service: selector %v ports %+v", svc.Spec.Selector, svc.Spec.Ports)
	}
	if !subset(pdb.Spec.Selector, labels) ||
		!(pdb.Spec.MaxUnavailable != nil && *pdb.Spec.MaxUnavailable < dep.Spec.Replicas || pdb.Spec.MinAvailable != nil && *pdb.Spec.MinAvailable >= 1) {
		t.Errorf("PodDisruptionBudget: selector %v, must keep a replica", pdb.Spec.Selector)
	}

	// Probes: liveness on /healthz (neither volume nor database), readiness on /readyz, which
	// waits up to readinessDBTimeout for the database.
	for name, p := range map[string]*probe{"liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		if p == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != c.Ports[0].Name {
			t.Errorf("%s probe %+v, want /healthz", name, p)
		}
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port != c.Ports[0].Name || p.TimeoutSeconds <= readinessDBTimeout {
		t.Errorf("readiness probe %+v, want /readyz with a timeout above %d s", p, readinessDBTimeout)
	}

	// Stopping: the pod leaves the endpoints (preStop), then a command of exec_timeout_max
	// may finish within shutdown_grace_seconds, then 5 s to answer, all within the grace.
	pre := c.Lifecycle.PreStop.Exec.Command
	pause := 0
	if len(pre) == 2 && pre[0] == "sleep" {
		pause, _ = strconv.Atoi(pre[1])
	}
	if pause <= 0 {
		t.Errorf("preStop %v, want a sleep while the endpoints drop the pod", pre)
	}
	if cfg.ShutdownGraceSeconds < cfg.ExecTimeoutMax {
		t.Errorf("shutdown_grace_seconds %d is below exec_timeout_max %d: a stop kills running commands", cfg.ShutdownGraceSeconds, cfg.ExecTimeoutMax)
	}
	if need := pause + cfg.ShutdownGraceSeconds + 5; pod.TerminationGracePeriodSeconds <= need {
		t.Errorf("terminationGracePeriodSeconds %d must exceed preStop + shutdown_grace_seconds + 5 (%d)", pod.TerminationGracePeriodSeconds, need)
	}

	// Storage: the claim is ReadWriteMany; decrypted working copies stay in the pod.
	volumes := map[string]int{}
	for i, v := range pod.Volumes {
		volumes[v.Name] = i
	}
	if i, ok := volumes[c.mountOf(cfg.StorageBasePath)]; !ok || pod.Volumes[i].PersistentVolumeClaim == nil ||
		pod.Volumes[i].PersistentVolumeClaim.ClaimName != pvc.Metadata.Name || !slices.Contains(pvc.Spec.AccessModes, "ReadWriteMany") {
		t.Errorf("%s is not on the ReadWriteMany claim %s %v", cfg.StorageBasePath, pvc.Metadata.Name, pvc.Spec.AccessModes)
	}
	if i, ok := volumes[c.mountOf(cfg.Encryption.WorkDir)]; !ok || pod.Volumes[i].EmptyDir == nil {
		t.Errorf("encryption.work_dir %q is not on the pod's own emptyDir", cfg.Encryption.WorkDir)
	}
	checkPodSecurity(t, "Deployment", pod, imageUID(t))
	if c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("Deployment: resources %+v", c.Resources)
	}

	// The migration Job: admin migrate with the servers' configuration and state secret,
	// no storage volume.
	jp := job.Spec.Template.Spec
	if len(jp.Containers) != 1 {
		t.Fatalf("Job: %d containers", len(jp.Containers))
	}
	jc := jp.Containers[0]
	if jc.Image != imageName || !slices.Equal(jc.Args, []string{"admin", "migrate"}) || !slices.Contains([]string{"Never", "OnFailure"}, jp.RestartPolicy) {
		t.Errorf("Job: image %s args %v restartPolicy %q", jc.Image, jc.Args, jp.RestartPolicy)
	}
	jenv := jc.env(t, configMaps)
	containerValves(t, "Job", jenv)
	if jenv["FILESHED_STATE_URL_FILE"] == "" || jenv["FILESHED_STATE_DRIVER"] != "postgres" {
		t.Error("Job: migrates PostgreSQL, the state URL from a file")
	}
	for _, v := range jp.Volumes {
		if v.PersistentVolumeClaim != nil {
			t.Error("Job: mounts the storage volume, which migrating PostgreSQL does not need")
		}
	}
	checkPodSecurity(t, "Job", jp, imageUID(t))
}

// checkPodSecurity: the image's user, no privilege, a read-only root, no service links (the
// Service fileshed would add FILESHED_* variables), and every *_FILE variable of its
// container a file of a mounted Secret.
func checkPodSecurity(t *testing.T, where string, pod podSpec, uid int) {
	t.Helper()
	c := pod.Containers[0]
	sc := c.SecurityContext
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser != uid || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		!sc.ReadOnlyRootFilesystem || !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("%s: runAsNonRoot %v runAsUser %d allowPrivilegeEscalation %v readOnlyRootFilesystem %v drop %v: want uid %d, "+
			"non-root, no privilege escalation, read-only root, every capability dropped", where, pod.SecurityContext.RunAsNonRoot,
			pod.SecurityContext.RunAsUser, sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation, sc.ReadOnlyRootFilesystem,
			sc.Capabilities.Drop, uid)
	}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Errorf("%s: enableServiceLinks must be false", where)
	}
	var secretDirs []string
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					secretDirs = append(secretDirs, path.Clean(m.MountPath))
				}
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	secretsUnder(t, where, env, secretDirs...)
}
