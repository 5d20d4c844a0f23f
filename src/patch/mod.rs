//! Patching: strategic merge (with the Kubernetes schema) and RFC 6902 JSON patches.
