/**
 * Post-trigger on `feed` writes: keeps the live posts of the partition at the 100 newest by
 * deleting the oldest, inside the write's own transaction (a failure rolls the write back, so
 * the feed never holds more than 100 live posts). Tombstones of deleted posts are not counted:
 * they expire by TTL.
 */
function truncateFeed() {
  var maxItems = 100;
  var collection = getContext().getCollection();
  var written = /** @type {BlogItem} */ (getContext().getResponse().getBody());

  function ensure(/** @type {boolean} */ accepted) {
    if (!accepted) throw new Error("truncateFeed was not accepted; the feed write is rolled back.");
  }

  var countQuery = {
    query: "SELECT VALUE COUNT(1) FROM f WHERE f.type = @type AND NOT IS_DEFINED(f.deleted)",
    parameters: [{ name: "@type", value: written.type }],
  };
  ensure(
    collection.queryDocuments(collection.getSelfLink(), countQuery, {}, function (err, counts) {
      if (err) throw err;
      var excess = /** @type {number} */ (counts[0]) - maxItems;
      if (excess <= 0) return;
      var oldestQuery = {
        query: "SELECT TOP @excess f._self FROM f WHERE f.type = @type AND NOT IS_DEFINED(f.deleted) ORDER BY f.type ASC, f.creationDate ASC, f.id ASC",
        parameters: [
          { name: "@excess", value: excess },
          { name: "@type", value: written.type },
        ],
      };
      ensure(
        collection.queryDocuments(collection.getSelfLink(), oldestQuery, {}, function (queryErr, oldest) {
          if (queryErr) throw queryErr;
          for (var i = 0; i < oldest.length; i++) {
            ensure(
              collection.deleteDocument(/** @type {BlogItem} */ (oldest[i])._self, {}, function (deleteErr) {
                if (deleteErr) throw deleteErr;
              }),
            );
          }
        }),
      );
    }),
  );
}
