//! `PUT /api/me/name`: a player's display name. What a name may be, its uniqueness and the
//! bound on renames are the profiles service's ([`crate::profiles`]); this handler
//! translates.

use axum::{Json, extract::State};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{ApiJson, ApiState, Authed, error::ErrorBody};
use crate::api::error::ApiError;

/// The display name to take, or `null` to clear it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NameRequest {
    /// 3-20 of the letters A-Z and a-z, the digits 0-9, `_` and `-`, starting and ending
    /// with a letter or a digit; `null` clears the name.
    #[schema(example = "ada_l")]
    pub name: Option<String>,
}

/// A player's profile: the display name beside the address, and the bot mark.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileView {
    /// The address: the player's identity.
    pub address: String,
    /// The display name, if the player took one.
    pub name: Option<String>,
    /// Whether the account is a bot (an agent said so; never taken away).
    pub bot: bool,
}

/// Take, change or clear my display name. Names are unique up to look-alikes (case,
/// 0/o, 1/l/i, 5/s, 2/z, 8/b, 3/e, 4/a, 7/t, rn/m, vv/w and -/_ count as alike); a few renames an hour.
#[utoipa::path(put, path = "/api/me/name", tag = "players", request_body = NameRequest,
    responses((status = 200, body = ProfileView), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn set_name(
    State(state): State<ApiState>,
    Authed(me): Authed,
    ApiJson(req): ApiJson<NameRequest>,
) -> Result<Json<ProfileView>, ApiError> {
    let profile = state.profiles.rename(me, req.name.as_deref()).await?;
    Ok(Json(ProfileView {
        address: me.to_string(),
        name: profile.name,
        bot: profile.bot,
    }))
}
