/**
 * Rewrites userUsername on every post, comment and like of one user in this partition.
 * Parameterized query, paged; stops when the server stops accepting operations and returns
 * the continuation of the page it was on, so the caller calls again with it. Idempotent:
 * items that already carry the new name are skipped.
 * Response body: {updated, continuation} where continuation is null when the partition is done.
 *
 * @param {string} userId
 * @param {string} username
 * @param {string | null} [continuation]
 */
function updateUsernames(userId, username, continuation) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var query = { query: "SELECT * FROM p WHERE p.userId = @userId", parameters: [{ name: "@userId", value: userId }] };
  var updated = 0;

  function finish(/** @type {string | null} */ next) {
    response.setBody({ updated: updated, continuation: next });
  }

  /** @param {string | undefined} pageToken */
  function processPage(pageToken) {
    var accepted = collection.queryDocuments(collection.getSelfLink(), query, { pageSize: 100, continuation: pageToken }, function (err, docs, options) {
      if (err) throw err;
      for (var i = 0; i < docs.length; i++) {
        var doc = /** @type {BlogItem} */ (docs[i]);
        if (doc.userUsername === username) continue;
        doc.userUsername = username;
        if (!collection.replaceDocument(doc._self, doc, {})) {
          // Out of budget: resume this page next time (already-renamed items are skipped).
          return finish(pageToken || "");
        }
        updated++;
      }
      if (options.continuation) processPage(options.continuation);
      else finish(null);
    });
    if (!accepted) finish(pageToken || "");
  }

  processPage(continuation || undefined);
}
