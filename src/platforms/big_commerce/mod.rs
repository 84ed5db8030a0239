//! BigCommerce (`big_commerce`, also accepted as `bigcommerce`): the store platform behind
//! the hosted service's own `big_commerce` token.

pub mod client;
