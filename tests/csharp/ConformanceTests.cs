// ConformanceTests.cs: the conformance kit (docs/conformance.md) scores the
// C# testee (nnn-cs testee: the codec, and libnnn through Native for run)
// 100 % at both levels over build/conformance: nnnkit's runner, its results
// file read back.
using System.IO;
using System.Json;
using System.Text;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class ConformanceTests
    {
        static long N(JsonValue v) => long.Parse(v.ToString(), System.Globalization.CultureInfo.InvariantCulture);

        [Test]
        public void KitScoresTheCsTesteeFull()
        {
            string dir = Tree.TempDir(), results = Path.Combine(dir, "results.json");
            string testee = "mono " + Tree.Tool + " testee";
            Ran r = Tree.Run(Tree.Nnnkit, "conformance --corpus " + Tree.Quote(Tree.Corpus) + " --testee " + Tree.Quote(testee)
                             + " --level recommended --results " + Tree.Quote(results));
            try
            {
                Assert.IsTrue(File.Exists(results), "nnnkit conformance wrote no results: " + r);
                var res = (JsonObject)JsonValue.Parse(File.ReadAllText(results));
                var why = new StringBuilder();
                foreach (JsonObject f in (JsonArray)res["unexpected_failures"])
                    why.Append("\n  ").Append((string)f["id"]).Append(' ').Append((string)f["check"]).Append(": ")
                       .Append((string)f["result"]).Append(", ").Append((object)f["why"] == null ? "" : (string)f["why"]);
                foreach (string level in new[] { "required", "recommended" })
                {
                    var l = (JsonObject)((JsonObject)res["levels"])[level];
                    Assert.Greater(N(l["total"]), 0L, level + ": no check made");
                    Assert.AreEqual(N(l["total"]), N(l["passed"]), level + ": " + l.ToString() + why);
                }
                Assert.AreEqual("true", res["ok"].ToString(), "not ok:" + why);
                Assert.AreEqual(0, r.Exit, r.ToString());
                System.Console.WriteLine("ConformanceTests: required " + ((JsonObject)res["levels"])["required"].ToString() + ", recommended "
                                         + ((JsonObject)res["levels"])["recommended"].ToString());
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }
    }
}
