/**
 * Rewrites userUsername on every live post, comment and like of one user in this partition
 * (soft-deleted items are left alone: a rewrite would restart their TTL). The parameterized
 * query selects only items that still carry another name, so each page is re-queried from the
 * start: rewritten items drop out, and nothing can be skipped. Bounded: when the server stops
 * accepting operations it returns a continuation ("" = call again), which the caller passes back.
 * Response body: {updated, continuation} where continuation is null when the partition is done.
 *
 * @param {string} userId
 * @param {string} username
 * @param {string | null} [continuation]
 */
function updateUsernames(userId, username, continuation) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var pageSize = 100;
  var query = {
    query: "SELECT * FROM p WHERE p.userId = @userId AND p.userUsername != @username AND NOT IS_DEFINED(p.deleted)",
    parameters: [
      { name: "@userId", value: userId },
      { name: "@username", value: username },
    ],
  };
  var updated = 0;

  function finish(/** @type {string | null} */ next) {
    response.setBody({ updated: updated, continuation: next });
  }

  function drain() {
    var accepted = collection.queryDocuments(collection.getSelfLink(), query, { pageSize: pageSize }, function (err, docs) {
      if (err) throw err;
      for (var i = 0; i < docs.length; i++) {
        var doc = /** @type {BlogItem} */ (docs[i]);
        doc.userUsername = username;
        delete doc.traceparent; // not this rename's trace: the change feed must not join it
        if (!collection.replaceDocument(doc._self, doc, {})) return finish("");
        updated++;
      }
      if (docs.length === pageSize) drain();
      else finish(null);
    });
    if (!accepted) finish("");
  }

  drain();
}
