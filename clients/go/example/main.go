// Command example indexes three documents, retrieves, and streams an answer.
//
//	go run ./example                      # against 127.0.0.1:50051 (`make serve`)
//	GROUNDWIRE_ADDRESS=host:port GROUNDWIRE_API_KEY=gw_... go run ./example
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/grpc/codes"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

func main() {
	address := os.Getenv("GROUNDWIRE_ADDRESS")
	if address == "" {
		address = "127.0.0.1:50051"
	}
	var options []groundwire.Option
	if key := os.Getenv("GROUNDWIRE_API_KEY"); key != "" {
		options = append(options, groundwire.WithAPIKey(key))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	client, err := groundwire.Dial(ctx, address, options...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// A collection for the example; ALREADY_EXISTS on a second run is fine.
	const collection = "go-example"
	var gwErr *groundwire.Error
	if _, err := client.CreateCollection(ctx, collection); err != nil && !(errors.As(err, &gwErr) && gwErr.Code == codes.AlreadyExists) {
		log.Fatal(err)
	}

	docs := []*groundwire.Document{
		{DocumentId: "rotation", Text: "# Key rotation\n\nRotate API keys every ninety days. Create the new key, deploy it, then delete the old one."},
		{DocumentId: "backups", Text: "# Backups\n\nSnapshots copy a collection while it keeps serving. Restore one into a new collection to inspect it."},
		{DocumentId: "tuning", Text: "# Tuning\n\nHybrid retrieval fuses dense similarity and BM25. Raise the lexical weight for exact identifiers."},
	}
	upserted, err := client.UpsertDocuments(ctx, collection, docs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("indexed %d documents (%d new or changed)\n", len(upserted.GetResults()), upserted.GetUpserted())

	question := "How often should API keys be rotated?"
	res, err := client.Retrieve(ctx, question, groundwire.Collection(collection), groundwire.TopK(2),
		groundwire.Mode(groundwire.ModeHybrid))
	if err != nil {
		log.Fatal(err)
	}
	for _, hit := range res.GetHits() {
		fmt.Printf("%d. %s (score %.3f)\n", hit.GetRank(), hit.GetChunk().GetDocumentId(), hit.GetScore())
	}

	stream, err := client.Answer(ctx, question, groundwire.Collection(collection), groundwire.TopK(2))
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	for event, err := range stream.Events() {
		if err != nil {
			log.Fatal(err)
		}
		switch e := event.(type) {
		case *groundwire.Delta:
			fmt.Print(e.Text)
		case *groundwire.Summary:
			fmt.Printf("\nfinish: %s, %d citation(s)\n", e.GetFinishReason(), len(e.GetCitations()))
		}
	}
}
