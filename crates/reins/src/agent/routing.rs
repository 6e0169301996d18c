use crate::completion::SharedModel;
use std::collections::HashMap;

/// The label a model passed to [`AgentBuilder::new`](super::AgentBuilder::new) is registered
/// under.
pub(crate) const DEFAULT_MODEL_LABEL: &str = "default";

/// The models of an agent, by label.
#[derive(Clone)]
pub(crate) struct ModelRegistry {
    pub default_label: String,
    /// Labels in registration order, for `ModelSelectEvent::available_models`.
    pub labels: Vec<String>,
    /// Looked up on every model call: foldhash, as the tool map.
    models: HashMap<String, SharedModel, foldhash::fast::RandomState>,
}

impl ModelRegistry {
    pub fn new(default: SharedModel) -> Self {
        let mut registry = ModelRegistry {
            default_label: DEFAULT_MODEL_LABEL.to_owned(),
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
        self.models.insert(label, model);
    }

    pub fn get(&self, label: &str) -> Option<&SharedModel> {
        self.models.get(label)
    }

    pub fn default_model(&self) -> Option<&SharedModel> {
        self.models.get(&self.default_label)
    }
}
