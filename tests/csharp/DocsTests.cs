// DocsTests.cs: the C# in docs/csharp.md compiles against the built
// assembly, so the page cannot promise an API the codec does not have.
using System.Collections.Generic;
using System.IO;
using System.Text;
using System.Text.RegularExpressions;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public class DocsTests
    {
        [Test]
        public void EveryCSharpBlockOfTheGuideCompiles()
        {
            string page = File.ReadAllText(Path.Combine(Tree.Source, "docs", "csharp.md"));
            MatchCollection blocks = Regex.Matches(page, "```csharp\n(.*?)```", RegexOptions.Singleline);
            Assert.That(blocks.Count, Is.GreaterThanOrEqualTo(3), "docs/csharp.md has fewer C# examples than it had");
            // Each block is a method body: the names it uses but does not
            // declare (an input x, its shape) are the method's parameters, and
            // its using directives go to the top of the file.
            var src = new StringBuilder("using System;\nusing System.IO;\n");
            var bodies = new StringBuilder();
            for (int i = 0; i < blocks.Count; i++)
            {
                bodies.Append("    static void Block").Append(i).Append("(float[] x, long[] shape)\n    {\n");
                foreach (string line in blocks[i].Groups[1].Value.Split('\n'))
                {
                    if (line.StartsWith("using ") && line.EndsWith(";"))
                        src.Append(line).Append('\n');
                    else
                        bodies.Append("        ").Append(line).Append('\n');
                }
                bodies.Append("    }\n");
            }
            src.Append("static class Guide\n{\n").Append(bodies).Append("}\n");
            string dir = Tree.TempDir();
            try
            {
                File.WriteAllText(Path.Combine(dir, "guide.cs"), src.ToString());
                string cs = Path.Combine(Tree.Build, "csharp");
                Ran r = Tree.Run("/bin/sh", "-c " + Tree.Quote(Tree.Mcs + " -nowarn:219,168 -target:library -r:"
                    + Path.Combine(cs, "Nnn.dll") + " -r:" + Path.Combine(cs, "Nnn.Poolswish.dll") + " -out:"
                    + Path.Combine(dir, "guide.dll") + " " + Path.Combine(dir, "guide.cs")));
                Assert.AreEqual(0, r.Exit, "docs/csharp.md's C# does not compile:\n" + r + "\n" + src);
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }
    }
}
