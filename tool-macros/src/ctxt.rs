//! Collects every error of one expansion, each spanned on the offending token (serde's `Ctxt`).

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn error(&self, span: Span, message: impl Display) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new(span, message));
    }

    pub(crate) fn error_spanned(&self, tokens: impl quote::ToTokens, message: impl Display) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// All errors combined into one, or `None`.
    pub(crate) fn finish(self) -> Option<syn::Error> {
        self.errors.into_inner().into_iter().reduce(|mut a, b| {
            a.combine(b);
            a
        })
    }
}
