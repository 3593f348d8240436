//! Balances and money: own ledger, owner deposits, withdrawals, the reserve.

use axum::{
    Json,
    extract::{Query, State},
    http::HeaderMap,
    response::IntoResponse,
};
use serde::{Deserialize, Serialize};
use triad_engine::Command;
use utoipa::{IntoParams, ToSchema};

use super::{
    ApiJson, ApiState, Authed,
    error::{Api, ApiError, ErrorBody},
    games::{Amount, CommandResult, run},
};
use crate::store::LedgerEntry;

/// Paging through ledger entries.
#[derive(Debug, Deserialize, IntoParams)]
pub struct LedgerQuery {
    /// Only entries with a sequence number below this (the previous page's `next_before`).
    pub before: Option<u64>,
    /// At most this many (1-200, default 50).
    pub limit: Option<u32>,
}

/// My balance and ledger entries.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerView {
    /// My spendable balance in minor units, as a decimal string.
    pub balance: String,
    /// Newest first.
    pub entries: Vec<LedgerEntry>,
    /// Pass as `before` for the next page; null on the last page.
    pub next_before: Option<u64>,
}

/// My balance and ledger entries, newest first.
#[utoipa::path(get, path = "/api/ledger", tag = "ledger", params(LedgerQuery),
    responses((status = 200, body = LedgerView), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn my_ledger(
    State(state): State<ApiState>,
    Authed(me): Authed,
    Query(q): Query<LedgerQuery>,
) -> Result<Json<LedgerView>, ApiError> {
    let limit = match q.limit {
        None => 50,
        Some(n) if (1..=200).contains(&n) => n,
        Some(_) => {
            return Err(ApiError::with_message(
                Api::InvalidParameter,
                "limit must be from 1 to 200",
            ));
        }
    };
    let balance = state.core.read().await.balance(me).to_string();
    let entries = state.store.ledger_entries(me, q.before, limit).await?;
    let next_before = (entries.len() == limit as usize)
        .then(|| entries.last().map(|e| e.seq))
        .flatten();
    Ok(Json(LedgerView {
        balance,
        entries,
        next_before,
    }))
}

/// A deposit of play money.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DepositRequest {
    /// Who receives it.
    pub to: String,
    /// How much, in minor units.
    pub amount: Amount,
}

/// Owner only: credit play money to a player.
#[utoipa::path(post, path = "/api/ledger/deposit", tag = "ledger", request_body = DepositRequest,
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn deposit(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<DepositRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let to = req
        .to
        .parse()
        .map_err(|_| ApiError::new(Api::InvalidAddress))?;
    run(
        &state,
        me,
        Command::Deposit {
            to,
            amount: req.amount.0,
        },
        &headers,
        None,
    )
    .await
}

/// A withdrawal.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WithdrawRequest {
    /// How much, in minor units.
    pub amount: Amount,
}

/// Take money out of my balance.
#[utoipa::path(post, path = "/api/ledger/withdraw", tag = "ledger", request_body = WithdrawRequest,
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn withdraw(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<WithdrawRequest>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::Withdraw {
            amount: req.amount.0,
        },
        &headers,
        None,
    )
    .await
}

/// The house reserve.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReserveView {
    /// The reserve in minor units, as a decimal string.
    pub reserve: String,
    /// Everything ever deposited.
    pub deposited: String,
    /// Everything ever withdrawn.
    pub withdrawn: String,
}

/// Owner only: the reserve.
#[utoipa::path(get, path = "/api/ledger/reserve", tag = "ledger",
    responses((status = 200, body = ReserveView), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn reserve(
    State(state): State<ApiState>,
    Authed(me): Authed,
) -> Result<Json<ReserveView>, ApiError> {
    let engine = state.core.read().await;
    if me != engine.config().owner {
        return Err(triad_engine::EngineError::OwnerOnly.into());
    }
    Ok(Json(ReserveView {
        reserve: engine.reserve().to_string(),
        deposited: engine.ledger().deposited().to_string(),
        withdrawn: engine.ledger().withdrawn().to_string(),
    }))
}

/// Owner only: move the whole reserve to the owner's balance (the `cryptosos` contract's `collectProfit()`).
#[utoipa::path(post, path = "/api/ledger/collect", tag = "ledger",
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn collect(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    run(&state, me, Command::CollectReserve, &headers, None).await
}
