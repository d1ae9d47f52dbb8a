// Go's golang.org/x/oauth2/clientcredentials (Debian's golang-golang-x-oauth2-dev) against
// Latchkey with its defaults: the token endpoint from discovery, AuthStyle auto-detected (it
// tries HTTP Basic, with client id and secret form-encoded as RFC 6749 §2.3.1 asks, first).
// Prints the token as one JSON line.
//
//	go run clientcredentials.go ISSUER CLIENT_ID SECRET SCOPE RESOURCE
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"golang.org/x/oauth2/clientcredentials"
)

func main() {
	issuer, id, secret, scope, resource := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	res, err := http.Get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		fail(err)
	}
	var meta struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.NewDecoder(res.Body).Decode(&meta); err != nil {
		fail(err)
	}
	conf := clientcredentials.Config{
		ClientID:       id,
		ClientSecret:   secret,
		TokenURL:       meta.TokenEndpoint,
		Scopes:         []string{scope},
		EndpointParams: url.Values{"resource": {resource}},
	}
	token, err := conf.Token(context.Background())
	if err != nil {
		fail(err)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"access_token": token.AccessToken,
		"token_type":   token.TokenType,
		"has_refresh":  token.RefreshToken != "",
		"scope":        token.Extra("scope"),
		"expires_in":   token.Extra("expires_in"),
	})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
