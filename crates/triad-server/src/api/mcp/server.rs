//! The MCP handler: Triad's tools, resources and prompt on rmcp's `ServerHandler`.
//!
//! One [`Triad`] serves one MCP session (or, from protocol 2026-07-28, one request). Every
//! tool acts as the request's logged-in address ([`super::Caller`]) by calling the REST
//! handler of the same action, and answers with structured content (the handler's JSON)
//! and a short text with the board drawn ([`super::text`]). A refusal is a tool error
//! (`isError: true`) whose structured content is the API's error body: the stable `code`,
//! its `error` name, and a `message` that says what to do.
//!
//! The tools are in `tools.rs`; here are the resources, the subscriptions and the prompt.

use std::{collections::HashSet, sync::Mutex};

use axum::{
    extract::{Path, State},
    http::request::Parts,
    response::IntoResponse,
};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    handler::server::router::tool::ToolRouter,
    model::{
        CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
        Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
        ResourceUpdatedNotificationParam, Role, ServerCapabilities, ServerConfig,
        SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
    tool_handler,
};
use serde::Deserialize;
use serde_json::{Value, json};
use triad_engine::{Address, MatchId};
use triad_rules::GameKind;

use super::{Caller, text};
use crate::{
    api::{
        ApiState,
        error::{Api, ApiError},
        games,
    },
    hub::Registration,
};

/// The most matches one MCP session (or one `subscriptions/listen`) follows.
pub const MAX_SUBSCRIPTIONS: usize = 16;

/// Frames queued for one MCP follower before it counts as too slow (as a WebSocket's).
const FOLLOW_QUEUE: usize = 256;

/// The URI template of a match's state.
const MATCH_TEMPLATE: &str = "triad://matches/{match_id}";

/// The URI of a match's state.
fn match_uri(id: u64) -> String {
    format!("triad://matches/{id}")
}

/// The match a `triad://matches/{id}` URI names.
fn match_of(uri: &str) -> Option<u64> {
    uri.strip_prefix("triad://matches/")?.parse().ok()
}

/// The game a `triad://rules/{game}` URI names.
fn rules_of(uri: &str) -> Option<GameKind> {
    uri.strip_prefix("triad://rules/")?.parse().ok()
}

/// A refusal in the API's shape (`code`, `error`, `message`).
#[derive(Debug)]
pub(super) struct Refusal(pub(super) Value);

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        Refusal(json!({"code": e.body.code, "error": e.body.error, "message": e.body.message}))
    }
}

impl Refusal {
    /// The tool error: the error body as structured content, and a line of text.
    pub(super) fn into_result(self) -> CallToolResult {
        let text = format!(
            "Refused: {} (code {}). {}",
            self.0["error"].as_str().unwrap_or("error"),
            self.0["code"],
            self.0["message"].as_str().unwrap_or_default()
        );
        let mut result = CallToolResult::structured_error(self.0);
        result.content = vec![ContentBlock::text(text)];
        result
    }
}

/// A handler's answer as JSON, or its refusal (the API's error body).
pub(super) async fn answered(reply: impl IntoResponse) -> Result<Value, Refusal> {
    let response = reply.into_response();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .map_err(|_| Refusal::from(ApiError::new(Api::InternalError)))?;
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if status.is_success() {
        Ok(body)
    } else if body["code"].is_number() {
        Err(Refusal(body))
    } else {
        Err(ApiError::new(Api::InternalError).into())
    }
}

/// A tool's answer: the structured content and its text form.
pub(super) fn answer(structured: Value, text: String) -> CallToolResult {
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// The logged-in address of the request (put there by `admit`).
pub(super) fn caller(parts: &Parts) -> Result<Address, Refusal> {
    parts
        .extensions
        .get::<Caller>()
        .map(|c| c.0)
        .ok_or_else(|| ApiError::new(Api::Unauthorized).into())
}

/// `get_prompt`'s `play` arguments.
#[derive(Debug, Deserialize)]
struct PlayArgs {
    game: String,
}

/// A hub registration, unregistered when dropped.
pub(super) struct Follow {
    state: ApiState,
    registration: Registration,
}

impl Drop for Follow {
    fn drop(&mut self) {
        self.state.hub.unregister(self.registration.id);
    }
}

impl Follow {
    pub(super) fn new(state: &ApiState) -> Follow {
        Follow {
            state: state.clone(),
            registration: state.hub.register(FOLLOW_QUEUE),
        }
    }

    pub(super) fn add(&self, id: u64) {
        self.state
            .hub
            .subscribe(self.registration.id, &format!("match:{id}"));
    }

    /// The next match whose events arrived, or `None` when the follow ends (too slow, the
    /// server shutting down).
    pub(super) async fn next(&mut self) -> Option<u64> {
        let registration = &mut self.registration;
        tokio::select! {
            frame = registration.frames.recv() => {
                frame.and_then(|f| f.topic.strip_prefix("match:").and_then(|id| id.parse().ok()))
            }
            () = registration.kicked.notified() => None,
            () = registration.shutdown.notified() => None,
        }
    }
}

/// The matches a legacy session follows (`resources/subscribe`), and the task that tells
/// the client when they change; the task (and its hub registration) ends with the session.
#[derive(Default)]
struct Subscriptions {
    matches: HashSet<u64>,
    /// The task's hub registration.
    registration: Option<u64>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Triad's MCP server for one session.
pub struct Triad {
    pub(super) state: ApiState,
    subscriptions: Mutex<Subscriptions>,
    tool_router: ToolRouter<Triad>,
}

impl std::fmt::Debug for Triad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Triad").finish_non_exhaustive()
    }
}

impl Triad {
    /// A server over the API's state.
    #[must_use]
    pub fn new(state: ApiState) -> Triad {
        Triad {
            state,
            subscriptions: Mutex::default(),
            tool_router: Self::tool_router(),
        }
    }

    fn subscriptions(&self) -> std::sync::MutexGuard<'_, Subscriptions> {
        self.subscriptions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The resources: the rules of each game, and each match's state.
fn resources() -> Vec<Resource> {
    [GameKind::TicTacToe, GameKind::Sos]
        .into_iter()
        .map(|game| {
            Resource::new(
                format!("triad://rules/{}", game.name()),
                format!("{} rules", game.name()),
            )
            .with_description(format!(
                "The rules of {} on Triad, and how to play it well",
                game.name()
            ))
            .with_mime_type("text/markdown")
        })
        .collect()
}

/// A match's state as a resource: its JSON view, and the text form.
async fn read_match(
    state: &ApiState,
    id: u64,
    me: Option<Address>,
) -> Result<ReadResourceResult, ErrorData> {
    let view = answered(games::get_match(State(state.clone()), Path(id)).await)
        .await
        .map_err(|refusal| {
            ErrorData::resource_not_found(
                refusal.0["message"]
                    .as_str()
                    .unwrap_or("no such match")
                    .to_owned(),
                Some(refusal.0),
            )
        })?;
    let uri = match_uri(id);
    let text = me.map_or_else(
        || text::grid(view["board"].as_str().unwrap_or_default()),
        |me| text::match_text(&view, me),
    );
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(view.to_string(), uri.clone()).with_mime_type("application/json"),
        ResourceContents::text(text, uri).with_mime_type("text/plain"),
    ]))
}

fn request_caller(context: &RequestContext<RoleServer>) -> Option<Address> {
    context
        .extensions
        .get::<Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .map(|c| c.0)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Triad {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .build(),
        );
        info.server_info = Implementation::new("triad", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Triad referees tic-tac-toe and SOS. Start with play_computer (or challenge, or join_queue), read the board in each answer, call legal_moves and make_move on your turn, and wait_for_turn on the opponent's. The prompt \"play\" teaches the whole loop; the resources triad://rules/{game} hold the rules, and triad://matches/{match_id} each match (subscribe to hear of its moves)."
                .to_owned(),
        );
        info
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(MATCH_TEMPLATE, "match")
                .with_description("A match's state: the JSON view and the board drawn. Subscribe to hear when it changes (the opponent moved, it ended).")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(game) = rules_of(&request.uri) {
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text::rules(game), request.uri.clone())
                    .with_mime_type("text/markdown"),
            ])
            .into());
        }
        if let Some(id) = match_of(&request.uri) {
            return Ok(read_match(&self.state, id, request_caller(&context))
                .await?
                .into());
        }
        Err(ErrorData::resource_not_found(
            format!(
                "no resource {}: the resources are triad://rules/tic-tac-toe, triad://rules/sos and triad://matches/{{match_id}}",
                request.uri
            ),
            None,
        ))
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(id) = match_of(&request.uri) else {
            return Err(ErrorData::invalid_params(
                "only a match can be subscribed to: triad://matches/{match_id}",
                None,
            ));
        };
        if self
            .state
            .match_view(MatchId(id))
            .await
            .ok()
            .flatten()
            .is_none()
        {
            return Err(ErrorData::resource_not_found(
                format!("no match {id}"),
                None,
            ));
        }
        let mut subscriptions = self.subscriptions();
        if !subscriptions.matches.contains(&id) && subscriptions.matches.len() >= MAX_SUBSCRIPTIONS
        {
            return Err(ErrorData::invalid_request(
                format!(
                    "a session follows at most {MAX_SUBSCRIPTIONS} matches; unsubscribe from one first"
                ),
                None,
            ));
        }
        subscriptions.matches.insert(id);
        match subscriptions.registration {
            Some(registration) => self
                .state
                .hub
                .subscribe(registration, &format!("match:{id}")),
            None => {
                let mut follow = Follow::new(&self.state);
                follow.add(id);
                subscriptions.registration = Some(follow.registration.id);
                let peer = context.peer.clone();
                subscriptions.task = Some(tokio::spawn(async move {
                    while let Some(id) = follow.next().await {
                        let notice = ResourceUpdatedNotificationParam::new(match_uri(id));
                        if peer.notify_resource_updated(notice).await.is_err() {
                            break;
                        }
                    }
                }));
            }
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(id) = match_of(&request.uri) {
            let mut subscriptions = self.subscriptions();
            subscriptions.matches.remove(&id);
            if let Some(registration) = subscriptions.registration {
                self.state
                    .hub
                    .unsubscribe(registration, &format!("match:{id}"));
            }
        }
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = Some(
            requested
                .resource_subscriptions
                .iter()
                .flatten()
                .filter(|uri| match_of(uri).is_some())
                .take(MAX_SUBSCRIPTIONS)
                .cloned()
                .collect(),
        );
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut follow = Follow::new(&self.state);
        for id in context
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| match_of(uri))
        {
            follow.add(id);
        }
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                next = follow.next() => match next {
                    Some(id) => {
                        if context.sink().notify_resource_updated(match_uri(id)).await.is_err() {
                            return Ok(());
                        }
                    }
                    None => return Ok(()),
                },
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "play",
            Some(
                "How to play a game of Triad well through these tools: the rules, a strategy, and the loop of tool calls",
            ),
            Some(vec![
                PromptArgument::new("game")
                    .with_description("tic-tac-toe or sos")
                    .with_required(true),
            ]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "play" {
            return Err(ErrorData::invalid_params(
                format!("no prompt {}; the prompt is \"play\"", request.name),
                None,
            ));
        }
        let args: PlayArgs =
            serde_json::from_value(Value::Object(request.arguments.unwrap_or_default())).map_err(
                |_| ErrorData::invalid_params("the prompt needs game: tic-tac-toe or sos", None),
            )?;
        let game: GameKind = args
            .game
            .parse()
            .map_err(|_| ErrorData::invalid_params("game is tic-tac-toe or sos", None))?;
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            text::play_prompt(game),
        )])
        .with_description(format!("Play {} on Triad", game.name()))
        .into())
    }
}
