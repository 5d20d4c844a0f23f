//! A deterministic generator of synthetic but realistic kustomize trees: per-app bases and
//! per-environment overlays, shared components and one top-level kustomization per environment.
//!
//! It writes, byte for byte, the trees of the project's `gen_workload.py` (same layout, same
//! names, same pseudo-random values: Python's Mersenne Twister seeded from a string is ported
//! here), so timings and reference outputs can be compared with trees made by either.
//!
//! Layout under the output folder: `apps/appNNN/base/` (Deployment, Service, ConfigMap,
//! ServiceAccount, Role + RoleBinding, HPA, generators), `apps/appNNN/overlays/<env>/` (images,
//! replicas, generator merge, strategic merge and JSON 6902 patches), `components/observability/`,
//! `components/provider-<p>/` and `envs/<env>/kustomization.yaml`, the tree to build.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use sha2::{Digest, Sha256, Sha512};

const ENV_NAMES: [&str; 8] = ["dev", "staging", "prod", "qa", "perf", "canary", "sandbox", "demo"];
const PROVIDERS: [&str; 3] = ["aws", "gcp", "azure"];
const TIERS: [&str; 3] = ["frontend", "backend", "worker"];
const TEAMS: [&str; 7] = ["payments", "search", "identity", "catalog", "checkout", "platform", "data"];

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    pub apps: usize,
    pub overlays: usize,
    pub seed: u64,
}

/// One environment overlay: its folder name, environment and cloud provider.
pub struct Env {
    pub name: String,
    pub env: &'static str,
    pub provider: &'static str,
}

/// The environment overlays, e.g. dev-aws, staging-gcp, prod-azure, qa-aws.
pub fn env_list(overlays: usize) -> Vec<Env> {
    (0..overlays)
        .map(|i| {
            let env = ENV_NAMES[i % ENV_NAMES.len()];
            let provider = PROVIDERS[i % PROVIDERS.len()];
            let mut name = format!("{env}-{provider}");
            if i >= ENV_NAMES.len() * PROVIDERS.len() {
                name.push_str(&format!("-{i}"));
            }
            Env { name, env, provider }
        })
        .collect()
}

impl Workload {
    /// Every file of the tree, by path relative to its root.
    pub fn files(&self) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        let envs = env_list(self.overlays);
        let width = 3.max((self.apps.max(1) - 1).to_string().len());
        let apps: Vec<String> = (0..self.apps).map(|i| format!("app{i:0width$}")).collect();
        for (i, app) in apps.iter().enumerate() {
            let mut rng = PyRandom::from_str_seed(&format!("{}:{app}", self.seed));
            gen_base(&mut files, app, i, &mut rng);
            for env in &envs {
                let mut rng = PyRandom::from_str_seed(&format!("{}:{app}:{}", self.seed, env.name));
                gen_app_overlay(&mut files, app, i, env, &mut rng);
            }
        }
        gen_components(&mut files, &envs);
        for env in &envs {
            gen_env(&mut files, &apps, env);
        }
        let env_dirs: Vec<String> = envs.iter().map(|e| format!("    \"envs/{}\"", e.name)).collect();
        files.insert(
            "workload.json".into(),
            format!(
                "{{\n  \"generator\": \"gen_workload.py\",\n  \"apps\": {},\n  \"overlays\": {},\n  \"seed\": {},\n  \"envs\": [\n{}\n  ]\n}}\n",
                self.apps,
                self.overlays,
                self.seed,
                env_dirs.join(",\n")
            ),
        );
        files
    }

    /// Writes the tree under `root` (which is emptied first).
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        if root.exists() {
            std::fs::remove_dir_all(root)?;
        }
        for (path, text) in self.files() {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("files are in folders"))?;
            std::fs::write(path, text)?;
        }
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Deterministic pseudo-random base64 text, wrapped at 64 columns (PEM-like).
fn fake_blob(seed: &str, nbytes: usize) -> String {
    let mut raw = Vec::new();
    let mut h = seed.as_bytes().to_vec();
    while raw.len() < nbytes {
        h = Sha256::digest(&h).to_vec();
        raw.extend_from_slice(&h);
    }
    let b = base64::engine::general_purpose::STANDARD.encode(&raw[..nbytes]);
    b.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join("\n")
}

fn gen_base(files: &mut BTreeMap<String, String>, app: &str, idx: usize, rng: &mut PyRandom) {
    let d = format!("apps/{app}/base");
    let tier = TIERS[idx % TIERS.len()];
    let team = TEAMS[idx % TEAMS.len()];
    let port = 8000 + (idx % 50) * 10;
    let n_env = 4 + idx % 6;
    let upper = app.to_uppercase().replace('-', "_");
    let db_user = app.replace('-', "_");
    let db_password = &sha1_hex(app.as_bytes())[..20];
    let api_key = &sha256_hex(app)[..32];

    files.insert(
        format!("{d}/kustomization.yaml"),
        format!(
            r#"apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization

labels:
  - pairs:
      app.kubernetes.io/name: {app}
    includeSelectors: true
  - pairs:
      app.kubernetes.io/part-of: shop
      team: {team}
      tier: {tier}

resources:
  - serviceaccount.yaml
  - rbac.yaml
  - configmap.yaml
  - deployment.yaml
  - service.yaml
  - hpa.yaml

configMapGenerator:
  - name: {app}-config
    literals:
      - LOG_LEVEL=info
      - HTTP_PORT={port}
      - UPSTREAM_URL=http://{app}-upstream:{upstream}
      - FEATURE_FLAGS=alpha,beta
    files:
      - config/application.properties
      - config/features.json

secretGenerator:
  - name: {app}-secret
    type: Opaque
    literals:
      - DB_USER={db_user}
      - DB_PASSWORD={db_password}
      - API_KEY={api_key}
    files:
      - tls.crt=secrets/tls.crt
"#,
            upstream = port + 1
        ),
    );

    let props: Vec<String> = (0..8 + idx % 8).map(|k| format!("{app}.setting.{k}={}", rng.randint(1, 10000))).collect();
    files.insert(
        format!("{d}/config/application.properties"),
        format!(
            "# generated application properties for {app}\nserver.port={port}\nserver.shutdown=graceful\nspring.application.name={app}\nmanagement.endpoints.web.exposure.include=health,info,prometheus\n{}\n",
            props.join("\n")
        ),
    );
    let mut features = String::from("{\n  \"version\": 1,\n  \"features\": [");
    for k in 0..3 + idx % 5 {
        let enabled = rng.randint(0, 1) != 0;
        let rollout = rng.randint(0, 100);
        let sep = if k == 0 { "" } else { "," };
        write!(features, "{sep}\n    {{\n      \"name\": \"feature-{k}\",\n      \"enabled\": {enabled},\n      \"rollout\": {rollout}\n    }}").unwrap();
    }
    features.push_str("\n  ]\n}\n");
    files.insert(format!("{d}/config/features.json"), features);
    files.insert(
        format!("{d}/secrets/tls.crt"),
        format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", fake_blob(app, 600)),
    );

    files.insert(
        format!("{d}/serviceaccount.yaml"),
        format!(
            r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: {app}
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::123456789012:role/{app}
"#
        ),
    );

    files.insert(
        format!("{d}/rbac.yaml"),
        format!(
            r#"apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {app}-reader
rules:
  - apiGroups: [""]
    resources: ["configmaps", "secrets"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["get", "create", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {app}-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {app}-reader
subjects:
  - kind: ServiceAccount
    name: {app}
"#
        ),
    );

    files.insert(
        format!("{d}/configmap.yaml"),
        format!(
            r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {app}-static
data:
  nginx.conf: |
    worker_processes 1;
    events {{ worker_connections 1024; }}
    http {{
      server {{
        listen {proxy_port};
        location / {{ proxy_pass http://127.0.0.1:{port}; }}
      }}
    }}
  OWNER: {team}
"#,
            proxy_port = port + 2
        ),
    );

    let env_block: Vec<String> = (0..n_env)
        .map(|k| format!("            - name: {upper}_VAR_{k}\n              value: \"value-{}\"", rng.randint(0, 99999)))
        .collect();
    let env_block = env_block.join("\n");
    files.insert(
        format!("{d}/deployment.yaml"),
        format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  annotations:
    description: "{app} service owned by {team}"
spec:
  replicas: 1
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      component: {app}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        component: {app}
    spec:
      serviceAccountName: {app}
      terminationGracePeriodSeconds: 30
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        fsGroup: 10001
      containers:
        - name: app
          image: registry.example.com/{team}/{app}:1.0.0
          imagePullPolicy: IfNotPresent
          args: ["--config", "/etc/{app}/application.properties", "--port", "{port}"]
          ports:
            - name: http
              containerPort: {port}
              protocol: TCP
            - name: metrics
              containerPort: 9090
              protocol: TCP
          env:
            - name: LOG_LEVEL
              valueFrom:
                configMapKeyRef:
                  name: {app}-config
                  key: LOG_LEVEL
            - name: DB_USER
              valueFrom:
                secretKeyRef:
                  name: {app}-secret
                  key: DB_USER
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {app}-secret
                  key: DB_PASSWORD
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: DEBUG
              value: "false"
{env_block}
          envFrom:
            - configMapRef:
                name: {app}-config
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              cpu: "1"
              memory: 512Mi
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            initialDelaySeconds: 10
            periodSeconds: 10
          readinessProbe:
            httpGet:
              path: /ready
              port: http
            periodSeconds: 5
            failureThreshold: 3
          startupProbe:
            tcpSocket:
              port: http
            failureThreshold: 30
            periodSeconds: 2
          volumeMounts:
            - name: config
              mountPath: /etc/{app}
              readOnly: true
            - name: tls
              mountPath: /etc/tls
              readOnly: true
            - name: tmp
              mountPath: /tmp
        - name: proxy
          image: registry.example.com/platform/envoy:1.27.0
          args: ["-c", "/etc/nginx/nginx.conf"]
          ports:
            - name: proxy
              containerPort: {proxy_port}
          env:
            - name: UPSTREAM_PORT
              value: "{port}"
          resources:
            requests:
              cpu: 50m
              memory: 64Mi
            limits:
              cpu: 200m
              memory: 128Mi
          readinessProbe:
            httpGet:
              path: /ready
              port: proxy
          volumeMounts:
            - name: proxy-config
              mountPath: /etc/nginx
      volumes:
        - name: config
          configMap:
            name: {app}-config
        - name: tls
          secret:
            secretName: {app}-secret
            items:
              - key: tls.crt
                path: tls.crt
        - name: proxy-config
          configMap:
            name: {app}-static
        - name: tmp
          emptyDir: {{}}
"#,
            proxy_port = port + 2
        ),
    );

    files.insert(
        format!("{d}/service.yaml"),
        format!(
            r#"apiVersion: v1
kind: Service
metadata:
  name: {app}
spec:
  type: ClusterIP
  selector:
    component: {app}
  ports:
    - name: http
      port: 80
      targetPort: http
    - name: metrics
      port: 9090
      targetPort: metrics
"#
        ),
    );

    files.insert(
        format!("{d}/hpa.yaml"),
        format!(
            r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {app}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {app}
  minReplicas: 1
  maxReplicas: {max_replicas}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {utilization}
"#,
            max_replicas = 3 + idx % 5,
            utilization = 60 + idx % 4 * 5
        ),
    );
}

fn gen_app_overlay(files: &mut BTreeMap<String, String>, app: &str, idx: usize, env: &Env, rng: &mut PyRandom) {
    let (env_name, env_short, prov) = (env.name.as_str(), env.env, env.provider);
    let d = format!("apps/{app}/overlays/{env_name}");
    let team = TEAMS[idx % TEAMS.len()];
    let prod = matches!(env_short, "prod" | "canary");
    let replicas = if prod { 3 + idx % 4 } else { 1 };
    let tag = format!("1.{}.{}", idx % 20, rng.randint(0, 30));
    let log_level = if prod { "warn" } else { "debug" };
    let history = if prod { 3 } else { 10 };
    let priority = if prod { "high" } else { "default" };

    files.insert(
        format!("{d}/kustomization.yaml"),
        format!(
            r#"apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization

resources:
  - ../../base

components:
  - ../../../../components/observability

labels:
  - pairs:
      app.kubernetes.io/version: "{tag}"
    includeTemplates: true

images:
  - name: registry.example.com/{team}/{app}
    newTag: "{tag}"

replicas:
  - name: {app}
    count: {replicas}

configMapGenerator:
  - name: {app}-config
    behavior: merge
    literals:
      - LOG_LEVEL={log_level}
      - ENVIRONMENT={env_short}
      - CLOUD_PROVIDER={prov}

patches:
  - path: deployment-patch.yaml
  - path: hpa-patch.json6902.yaml
    target:
      group: autoscaling
      version: v2
      kind: HorizontalPodAutoscaler
      name: {app}
  - target:
      kind: Deployment
      name: {app}
    patch: |-
      - op: replace
        path: /spec/revisionHistoryLimit
        value: {history}
      - op: add
        path: /spec/template/spec/priorityClassName
        value: {priority}-priority
      - op: add
        path: /spec/template/metadata/annotations/deploy.example.com~1environment
        value: {env_short}
  - target:
      kind: Service
      labelSelector: app.kubernetes.io/name={app}
    patch: |-
      apiVersion: v1
      kind: Service
      metadata:
        name: not-used
        annotations:
          service.example.com/env: {env_name}
"#
        ),
    );

    let upper_env = env_short.to_uppercase();
    let extra_env: Vec<String> = (0..2 + idx % 3)
        .map(|k| format!("            - name: {upper_env}_EXTRA_{k}\n              value: \"{}\"", rng.randint(0, 99999)))
        .collect();
    let extra_env = extra_env.join("\n");
    let debug = if prod {
        "            - name: DEBUG\n              $patch: delete"
    } else {
        "            - name: DEBUG\n              value: \"true\""
    };
    let upper = app.to_uppercase().replace('-', "_");
    let (cpu, memory) = if prod { (200, 256) } else { (50, 128) };
    files.insert(
        format!("{d}/deployment-patch.yaml"),
        format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
spec:
  template:
    spec:
      containers:
        - name: app
          resources:
            requests:
              cpu: {cpu}m
              memory: {memory}Mi
          env:
            - name: {upper}_VAR_0
              value: "{env_name}-override"
{debug}
{extra_env}
          volumeMounts:
            - name: cache
              mountPath: /var/cache/{app}
        - name: proxy
          resources:
            limits:
              memory: {memory}Mi
      volumes:
        - name: tmp
          emptyDir:
            medium: Memory
            sizeLimit: 64Mi
        - name: cache
          emptyDir:
            sizeLimit: 1Gi
"#
        ),
    );

    files.insert(
        format!("{d}/hpa-patch.json6902.yaml"),
        format!(
            "- op: replace\n  path: /spec/minReplicas\n  value: {replicas}\n- op: replace\n  path: /spec/maxReplicas\n  value: {}\n",
            replicas * 4
        ),
    );
}

fn gen_components(files: &mut BTreeMap<String, String>, envs: &[Env]) {
    files.insert(
        "components/observability/kustomization.yaml".into(),
        r#"apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component

patches:
  # JSON6902 first: it indexes containers/0, which must still be 'app'
  - target:
      kind: Deployment
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value:
          name: OTEL_EXPORTER_OTLP_ENDPOINT
          value: http://localhost:4317
  - target:
      kind: Deployment
    patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: any
      spec:
        template:
          metadata:
            annotations:
              prometheus.io/scrape: "true"
              prometheus.io/port: "9090"
          spec:
            containers:
              - name: otel-agent
                image: otel/opentelemetry-collector:0.98.0
                args: ["--config=/conf/agent.yaml"]
                resources:
                  requests:
                    cpu: 10m
                    memory: 32Mi
"#
        .into(),
    );
    let mut providers: Vec<&str> = envs.iter().map(|e| e.provider).collect();
    providers.sort_unstable();
    providers.dedup();
    for prov in providers {
        files.insert(
            format!("components/provider-{prov}/kustomization.yaml"),
            format!(
                r#"apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component

resources:
  - networkpolicy.yaml

patches:
  - target:
      kind: Deployment
      labelSelector: tier in (backend,worker)
    patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: any
      spec:
        template:
          spec:
            nodeSelector:
              cloud.example.com/provider: {prov}
              cloud.example.com/pool: general
            tolerations:
              - key: dedicated
                operator: Equal
                value: {prov}-general
                effect: NoSchedule
"#
            ),
        );
        files.insert(
            format!("components/provider-{prov}/networkpolicy.yaml"),
            format!(
                r#"apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-{prov}
spec:
  podSelector: {{}}
  policyTypes:
    - Ingress
    - Egress
  egress:
    - to:
        - namespaceSelector: {{}}
      ports:
        - protocol: UDP
          port: 53
"#
            ),
        );
    }
}

fn gen_env(files: &mut BTreeMap<String, String>, apps: &[String], env: &Env) {
    let (env_name, env_short, prov) = (env.name.as_str(), env.env, env.provider);
    let res: Vec<String> = apps.iter().map(|a| format!("  - ../../apps/{a}/overlays/{env_name}")).collect();
    let res = res.join("\n");
    let digest = sha256_hex(prov);
    files.insert(
        format!("envs/{env_name}/kustomization.yaml"),
        format!(
            r#"apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization

namespace: shop-{env_name}
namePrefix: {env_short}-

commonLabels:
  environment: {env_short}

labels:
  - pairs:
      cloud.example.com/provider: {prov}

commonAnnotations:
  owner.example.com/contact: platform-team@example.com
  config.example.com/environment: {env_name}

images:
  - name: registry.example.com/platform/envoy
    newName: mirror-{prov}.example.com/platform/envoy
    newTag: 1.27.3
  - name: otel/opentelemetry-collector
    newName: mirror-{prov}.example.com/otel/opentelemetry-collector
    digest: sha256:{digest}

components:
  - ../../components/provider-{prov}

resources:
{res}

patches:
  - target:
      kind: Deployment
      labelSelector: tier=frontend
    patch: |-
      - op: add
        path: /spec/template/spec/topologySpreadConstraints
        value:
          - maxSkew: 1
            topologyKey: topology.kubernetes.io/zone
            whenUnsatisfiable: ScheduleAnyway
            labelSelector:
              matchLabels:
                tier: frontend
  - target:
      kind: HorizontalPodAutoscaler
    patch: |-
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: any
      spec:
        behavior:
          scaleDown:
            stabilizationWindowSeconds: 300
  - target:
      kind: ServiceAccount
      annotationSelector: eks.amazonaws.com/role-arn
    patch: |-
      - op: add
        path: /automountServiceAccountToken
        value: false
"#
        ),
    );
}

/// Python's `random.Random` (MT19937) seeded with a string, as far as `randint` needs it.
pub struct PyRandom {
    state: [u32; 624],
    index: usize,
}

impl PyRandom {
    /// `random.Random(text)`: the seed is the big integer of `text` followed by its SHA-512.
    pub fn from_str_seed(text: &str) -> PyRandom {
        let mut bytes = text.as_bytes().to_vec();
        bytes.extend_from_slice(&Sha512::digest(text.as_bytes()));
        // The integer's 32-bit words, least significant first, without leading zero words.
        bytes.reverse();
        let mut key: Vec<u32> = bytes
            .chunks(4)
            .map(|c| c.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (8 * i))))
            .collect();
        while key.len() > 1 && *key.last().unwrap() == 0 {
            key.pop();
        }
        let mut rng = PyRandom { state: [0; 624], index: 624 };
        rng.init_by_array(&key);
        rng
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..624 {
            let prev = self.state[i - 1];
            self.state[i] = 1812433253u32.wrapping_mul(prev ^ (prev >> 30)).wrapping_add(i as u32);
        }
        self.index = 624;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19650218);
        let (mut i, mut j) = (1usize, 0usize);
        let mt = &mut self.state;
        for _ in 0..624.max(key.len()) {
            let prev = mt[i - 1];
            mt[i] = (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1664525)).wrapping_add(key[j]).wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            let prev = mt[i - 1];
            mt[i] = (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1566083941)).wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            let mt = &mut self.state;
            for k in 0..624 {
                let y = (mt[k] & 0x8000_0000) | (mt[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = mt[(k + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                mt[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `randint(a, b)`: `a + _randbelow(b - a + 1)` by rejection sampling on `getrandbits`.
    pub fn randint(&mut self, a: u64, b: u64) -> u64 {
        let n = b - a + 1;
        let k = 64 - n.leading_zeros();
        assert!(k <= 32, "ranges above 32 bits are not needed here");
        loop {
            let r = u64::from(self.next_u32() >> (32 - k));
            if r < n {
                return a + r;
            }
        }
    }
}

/// SHA-1, for the one value of the tree that Python derives from it.
fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 80];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}
