//! The HTTP layer: what every route shares. Request guards for who is calling (`auth`,
//! with the API's own `users`), the one body decoder (`body`), path ids and the 201/204
//! answers (`api`), the error envelope and its catcher (`error`), login throttling
//! (`throttle`), conditional requests (`conditional`), the served OpenAPI document
//! (`openapi`) and the dashboard's page and assets (`dashboard`). Resources build on it;
//! it knows none of them.

pub mod api;
pub mod auth;
pub mod body;
pub mod conditional;
pub mod dashboard;
pub mod error;
pub mod openapi;
pub mod throttle;
pub mod users;
