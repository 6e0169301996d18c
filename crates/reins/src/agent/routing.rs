use crate::completion::SharedModel;
use std::collections::HashMap;

/// The label a model passed to [`AgentBuilder::new`](super::AgentBuilder::new) is registered
/// under.
pub(crate) const DEFAULT_MODEL_LABEL: &str = "default";

/// The models of an agent, by label.
#[derive(Clone)]
pub(crate) struct ModelRegistry {
    /// Set through [`ModelRegistry::route_by_default`], which keeps `default` in step.
    pub default_label: String,
    /// The model under `default_label`: most turns call it, and find it without hashing.
    default: SharedModel,
    /// Labels in registration order, for `ModelSelectEvent::available_models`.
    pub labels: Vec<String>,
    /// Looked up on every model call: foldhash, as the tool map.
    models: HashMap<String, SharedModel, foldhash::fast::RandomState>,
}

impl ModelRegistry {
    pub fn new(default: SharedModel) -> Self {
        let mut registry = ModelRegistry {
            default_label: DEFAULT_MODEL_LABEL.to_owned(),
            default: default.clone(),
            labels: Vec::new(),
            models: HashMap::default(),
        };
        registry.insert(DEFAULT_MODEL_LABEL.to_owned(), default);
        registry
    }

    pub fn insert(&mut self, label: String, model: SharedModel) {
        if !self.models.contains_key(&label) {
            self.labels.push(label.clone());
        }
        if label == self.default_label {
            self.default = model.clone();
        }
        self.models.insert(label, model);
    }

    /// Registers `model` under `label` and makes it the default.
    pub fn route_by_default(&mut self, label: String, model: SharedModel) {
        self.default_label = label.clone();
        self.insert(label, model);
    }

    pub fn get(&self, label: &str) -> Option<&SharedModel> {
        if label == self.default_label {
            return Some(&self.default);
        }
        self.models.get(label)
    }

    pub fn default_model(&self) -> &SharedModel {
        &self.default
    }
}
