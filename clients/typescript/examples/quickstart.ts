import { GroundwireClient } from "@groundwire/client";

async function main(): Promise<void> {
  const client = new GroundwireClient(process.env.GROUNDWIRE_ADDRESS ?? "127.0.0.1:50051", {
    apiKey: process.env.GROUNDWIRE_API_KEY, // sent as `authorization: Bearer <key>`
    timeoutMs: 30_000,
  });
  try {
    const collection = "quickstart";
    if (!(await client.listCollections()).some((c) => c.name === collection)) {
      await client.createCollection(collection, { description: "three documents about the sky" });
    }

    // Index three documents (an iterable or async iterable; one result per document).
    const upsert = await client.upsertDocuments([
      { documentId: "tides", text: "# Tides\n\nTides are caused by the Moon's gravity pulling on the oceans." },
      { documentId: "seasons", text: "# Seasons\n\nSeasons come from the tilt of the Earth's axis." },
      { documentId: "eclipses", text: "# Eclipses\n\nA solar eclipse happens when the Moon passes between the Sun and the Earth." },
    ], { collection });
    console.log(`indexed ${upsert.upserted} documents, ${upsert.chunksWritten} chunks`);

    // Retrieve: ranked hits plus a cited context within the budget.
    const found = await client.retrieve("What causes tides?", { collection, mode: "hybrid", topK: 2, budget: { maxTokens: 500 } });
    for (const hit of found.hits) {
      console.log(`${hit.rank}. ${hit.chunk?.documentId} (${hit.score.toFixed(3)})`);
    }

    // Stream an answer: started -> text deltas -> summary with citations.
    for await (const event of client.answer("What causes tides?", { collection, topK: 2 })) {
      if (event.type === "delta") {
        process.stdout.write(event.text);
      } else if (event.type === "summary") {
        console.log(`\ncited: ${event.citations.map((c) => c.documentId).join(", ")}`);
      }
    }
  } finally {
    client.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
