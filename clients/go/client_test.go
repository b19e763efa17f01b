package groundwire_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

var corpus = []*groundwire.Document{
	{DocumentId: "rotation", Title: "Key rotation", Metadata: map[string]string{"team": "security"},
		Text: "# Key rotation\n\nRotate API keys every ninety days. Create the new key with groundwire keygen, deploy it, then delete the old key from the keys file."},
	{DocumentId: "backups", Title: "Backups", Metadata: map[string]string{"team": "ops"},
		Text: "# Backups\n\nSnapshots copy a collection while it keeps serving. Restore a snapshot into a new collection to inspect it before replacing the live one."},
	{DocumentId: "tuning", Title: "Tuning", Metadata: map[string]string{"team": "search"},
		Text: "# Tuning\n\nHybrid retrieval fuses dense similarity and BM25. Raise the lexical weight when queries contain exact identifiers such as error codes."},
}

func newClient(t *testing.T, address string, options ...groundwire.Option) *groundwire.Client {
	t.Helper()
	client, err := groundwire.New(address, options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// indexed creates a collection holding the corpus on the shared server.
func indexed(t *testing.T, client *groundwire.Client, name string) {
	t.Helper()
	ctx := timeout(t)
	if _, err := client.CreateCollection(ctx, name, groundwire.Description("go client test")); err != nil {
		t.Fatal(err)
	}
	res, err := client.UpsertDocuments(ctx, name, corpus)
	if err != nil {
		t.Fatal(err)
	}
	if res.GetUpserted() != 3 || len(res.GetResults()) != 3 {
		t.Fatalf("upserted %d of 3: %v", res.GetUpserted(), res.GetResults())
	}
}

func TestIndexRetrieveAnswer(t *testing.T) {
	client := newClient(t, shared.Address)
	ctx := timeout(t)
	indexed(t, client, "end-to-end")

	res, err := client.Retrieve(ctx, "how often should API keys be rotated?", groundwire.Collection("end-to-end"),
		groundwire.Mode(groundwire.ModeHybrid), groundwire.TopK(2), groundwire.TokenBudget(500))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetHits()) != 2 || res.GetHits()[0].GetChunk().GetDocumentId() != "rotation" {
		t.Fatalf("want 2 hits led by rotation, got %v", res.GetHits())
	}
	if res.GetMode() != groundwire.ModeHybrid || res.GetContext().GetBudgetTokens() != 500 {
		t.Fatalf("mode %v budget %d", res.GetMode(), res.GetContext().GetBudgetTokens())
	}

	filtered, err := client.Retrieve(ctx, "how often should API keys be rotated?", groundwire.Collection("end-to-end"),
		groundwire.Mode(groundwire.ModeLexical), groundwire.Filter(&groundwire.Filters{MetadataEquals: map[string]string{"team": "ops"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range filtered.GetHits() {
		if hit.GetChunk().GetDocumentId() != "backups" {
			t.Fatalf("the filter let %s through", hit.GetChunk().GetDocumentId())
		}
	}

	stream, err := client.Answer(ctx, "how often should API keys be rotated?", groundwire.Collection("end-to-end"), groundwire.TopK(3))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var text strings.Builder
	var summary *groundwire.Summary
	for event, err := range stream.Events() {
		if err != nil {
			t.Fatal(err)
		}
		switch e := event.(type) {
		case *groundwire.Started:
			kinds = append(kinds, "started")
			if len(e.GetRetrieval().GetHits()) == 0 {
				t.Fatal("the started event carries no hits")
			}
		case *groundwire.Delta:
			if kinds[len(kinds)-1] != "delta" {
				kinds = append(kinds, "delta")
			}
			text.WriteString(e.Text)
		case *groundwire.Summary:
			kinds = append(kinds, "summary")
			summary = e
		}
	}
	if strings.Join(kinds, ",") != "started,delta,summary" {
		t.Fatalf("events %v", kinds)
	}
	if summary.GetText() != text.String() || !strings.Contains(text.String(), "ninety days") {
		t.Fatalf("deltas %q vs summary %q", text.String(), summary.GetText())
	}
	if len(summary.GetCitations()) == 0 || summary.GetCitations()[0].GetDocumentId() != "rotation" {
		t.Fatalf("citations %v", summary.GetCitations())
	}
	if stream.Summary() != summary.AnswerSummary {
		t.Fatal("Summary() is not the summary event")
	}
}

func TestDocumentsAndCollections(t *testing.T) {
	client := newClient(t, shared.Address)
	ctx := timeout(t)
	indexed(t, client, "crud")

	again, err := client.UpsertDocuments(ctx, "crud", corpus)
	if err != nil {
		t.Fatal(err)
	}
	if again.GetUnchanged() != 3 || again.GetResults()[0].GetOutcome() != groundwire.OutcomeUnchanged {
		t.Fatalf("re-upsert: %v", again)
	}

	// From an iterator, with one bad document: per-document results, the others written.
	var seq iter.Seq[*groundwire.Document] = func(yield func(*groundwire.Document) bool) {
		for i := range 3 {
			id := fmt.Sprintf("generated-%d", i)
			if i == 1 {
				id = "" // invalid: empty id
			}
			if !yield(&groundwire.Document{DocumentId: id, Text: fmt.Sprintf("Generated note number %d about widgets.", i)}) {
				return
			}
		}
	}
	res, err := client.UpsertDocumentsSeq(ctx, "crud", seq)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := []groundwire.DocumentOutcome{}
	for _, r := range res.GetResults() {
		outcomes = append(outcomes, r.GetOutcome())
	}
	if fmt.Sprint(outcomes) != fmt.Sprint([]groundwire.DocumentOutcome{groundwire.OutcomeUpserted, groundwire.OutcomeFailed, groundwire.OutcomeUpserted}) {
		t.Fatalf("outcomes %v: %v", outcomes, res.GetResults())
	}
	if res.GetResults()[1].GetError() == "" {
		t.Fatal("the failed document carries no reason")
	}

	doc, err := client.GetDocument(ctx, "crud", "backups")
	if err != nil {
		t.Fatal(err)
	}
	if doc.GetDocument().GetTitle() != "Backups" || len(doc.GetChunks()) == 0 {
		t.Fatalf("GetDocument: %v", doc)
	}
	deleted, err := client.DeleteDocuments(ctx, "crud", "backups", "never-there")
	if err != nil {
		t.Fatal(err)
	}
	if deleted.GetDeleted() != 1 || fmt.Sprint(deleted.GetNotFound()) != "[never-there]" {
		t.Fatalf("delete: %v", deleted)
	}
	_, err = client.GetDocument(ctx, "crud", "backups")
	if status.Code(err) != codes.NotFound {
		t.Fatalf("a deleted document: %v", err)
	}

	stats, err := client.Stats(ctx, "crud")
	if err != nil {
		t.Fatal(err)
	}
	if stats.GetCollection().GetDocumentCount() != 4 {
		t.Fatalf("stats: %d documents", stats.GetCollection().GetDocumentCount())
	}
	collections, err := client.ListCollections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, c := range collections {
		names = append(names, c.GetName())
	}
	if !strings.Contains(strings.Join(names, ","), "crud") {
		t.Fatalf("collections %v", names)
	}
	dropped, err := client.DropCollection(ctx, "crud")
	if err != nil || dropped != 4 {
		t.Fatalf("drop: %d, %v", dropped, err)
	}
	_, err = client.Stats(ctx, "crud")
	if status.Code(err) != codes.NotFound {
		t.Fatalf("stats of a dropped collection: %v", err)
	}
	serving, err := client.Health(ctx)
	if err != nil || !serving {
		t.Fatalf("health: %v %v", serving, err)
	}
}

func TestBadRequestFieldViolation(t *testing.T) {
	client := newClient(t, shared.Address)
	_, err := client.Retrieve(timeout(t), "anything", groundwire.TopK(0))
	var gwErr *groundwire.Error
	if !errors.As(err, &gwErr) {
		t.Fatalf("not a *groundwire.Error: %T %v", err, err)
	}
	if gwErr.Code != codes.InvalidArgument || status.Code(err) != codes.InvalidArgument {
		t.Fatalf("code %v", gwErr.Code)
	}
	violation, ok := gwErr.Violation("top_k")
	if !ok || !strings.Contains(violation.Description, "between 1 and") {
		t.Fatalf("violations %v", gwErr.FieldViolations)
	}
	if !strings.Contains(err.Error(), "top_k") {
		t.Fatalf("message %q", err.Error())
	}
	if st, ok := status.FromError(err); !ok || st.Message() != gwErr.Message {
		t.Fatalf("status.FromError: %v %v", st, ok)
	}
}

func TestCancelAnswerStream(t *testing.T) {
	client := newClient(t, shared.Address)
	indexed(t, client, "cancel")
	ctx, cancel := context.WithCancel(timeout(t))
	stream, err := client.Answer(ctx, "how do snapshots work?", groundwire.Collection("cancel"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if _, ok := first.(*groundwire.Started); !ok || err != nil {
		t.Fatalf("first event %T %v", first, err)
	}
	cancel()
	_, err = stream.Recv()
	if !errors.Is(err, context.Canceled) || status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: %v", err)
	}
	if _, again := stream.Recv(); again != err {
		t.Fatalf("the error is not sticky: %v", again)
	}

	// Close cancels the same way, and the server keeps answering.
	stream, err = client.Answer(timeout(t), "how do snapshots work?", groundwire.Collection("cancel"))
	if err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if _, err = stream.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := client.Retrieve(timeout(t), "snapshots", groundwire.Collection("cancel")); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineExpires(t *testing.T) {
	client := newClient(t, shared.Address)
	if _, err := client.CreateCollection(timeout(t), "deadline"); err != nil {
		t.Fatal(err)
	}
	// The upsert stream is open on the server when the deadline passes: the source stalls.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	stalled := func(yield func(*groundwire.Document) bool) {
		if yield(corpus[0]) {
			<-ctx.Done()
		}
	}
	_, err := client.UpsertDocumentsSeq(ctx, "deadline", stalled)
	if !errors.Is(err, context.DeadlineExceeded) || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("want DEADLINE_EXCEEDED, got %v", err)
	}

	// A unary call whose deadline has passed fails the same way, without retries.
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	_, err = client.Retrieve(expired, "anything", groundwire.Collection("deadline"))
	var gwErr *groundwire.Error
	if !errors.As(err, &gwErr) || gwErr.Code != codes.DeadlineExceeded {
		t.Fatalf("want DEADLINE_EXCEEDED, got %v", err)
	}
}

func TestExampleRuns(t *testing.T) {
	cmd := exec.Command("go", "run", "./example")
	cmd.Env = append(os.Environ(), "GROUNDWIRE_ADDRESS="+shared.Address)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./example: %v\n%s", err, out)
	}
	for _, want := range []string{"indexed 3 documents", "1. rotation", "[DOC:rotation", "finish: stop"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the example's output lacks %q:\n%s", want, out)
		}
	}
}
