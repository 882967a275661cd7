//! Running the task batches a turn triggers through `crate::batches`.

use std::collections::{BTreeMap, HashMap};

use mzk_analyzer::model::Bundle;
use serde_json::Value;

use super::{Engine, TurnFailure};
use crate::backend::ModelBackend;
use crate::context::Pending;
use crate::events::Event;
use crate::{batches, outputs};

impl<'a> Engine<'a> {
    pub(super) async fn task_batches(
        &mut self,
        agent: &str,
        body: &Value,
        pending: &BTreeMap<String, Pending>,
    ) -> Result<(), TurnFailure> {
        let bundle: &'a Bundle = self.bundle;
        for batch in bundle
            .task_batches
            .iter()
            .filter(|b| b.trigger_agent.as_ref().is_some_and(|t| t.text == agent))
        {
            let payload = if batch
                .source_kind
                .as_ref()
                .is_some_and(|k| k.text == "context_variable")
            {
                let mut ctx = self.state.context.clone();
                for (k, op) in pending {
                    match op {
                        Pending::Set(v, _) => {
                            ctx.insert(k.clone(), v.clone());
                        }
                        Pending::Delete(_) => {
                            ctx.remove(k);
                        }
                    }
                }
                Value::Object(ctx)
            } else {
                outputs::parse_body(body)
            };
            let tasks = batches::tasks_of(batch, &payload);
            if tasks.is_empty() {
                self.emit(Event::Notice {
                    message: format!(
                        "task batch {}: no tasks at `{}`; skipped (its status key keeps its value)",
                        batch.id.text,
                        batch.source_path.as_ref().map_or("", |p| p.text.as_str())
                    ),
                });
                continue;
            }
            let prompts: HashMap<String, String> = bundle
                .agents
                .iter()
                .map(|a| (a.name.text.clone(), self.exposed_prompt(&a.name.text)))
                .collect();
            // Task events reach the sink while the batch runs.
            let (events, mut incoming) = tokio::sync::mpsc::unbounded_channel();
            let run = {
                let backend: &dyn ModelBackend = &*self.backend;
                let sink = &mut *self.sink;
                let work = batches::run(bundle, backend, batch, agent, tasks, &prompts, &events);
                tokio::pin!(work);
                loop {
                    tokio::select! {
                        run = &mut work => break run,
                        Some(event) = incoming.recv() => sink.emit(&event),
                    }
                }
            };
            while let Ok(event) = incoming.try_recv() {
                self.emit(event);
            }
            self.state.synthetic_replies += run.synthetic_replies;
            for (key, value) in run.writes {
                self.policy
                    .check(&key, "task_batch", "set")
                    .map_err(|e| TurnFailure(e.to_string()))?;
                let mut write = BTreeMap::new();
                write.insert(key, Pending::Set(value, "task_batch".into()));
                self.commit(write);
            }
            if let Some(error) = run.error {
                return Err(TurnFailure(error));
            }
        }
        Ok(())
    }
}
