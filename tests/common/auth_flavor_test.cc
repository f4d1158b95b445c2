#include "common/auth_flavor.h"

#include "gtest/gtest.h"

namespace nfs3d {
namespace {

TEST(AuthFlavorTest, NumbersAreTheWireOnes) {
  // RFC 5531 §8.2, RFC 2203 §3, RFC 2623 §2.1.
  EXPECT_EQ(kAuthNone, 0u);
  EXPECT_EQ(kAuthSys, 1u);
  EXPECT_EQ(kRpcsecGss, 6u);
  EXPECT_EQ(kKrb5, 390003u);
  EXPECT_EQ(kKrb5i, 390004u);
  EXPECT_EQ(kKrb5p, 390005u);
}

TEST(AuthFlavorTest, NamesAndNumbersMapBothWays) {
  for (Flavor f : {kAuthNone, kAuthSys, kKrb5, kKrb5i, kKrb5p}) {
    EXPECT_EQ(FlavorNamed(FlavorName(f)), f) << FlavorName(f);
  }
  EXPECT_EQ(FlavorNamed("unix"), kAuthSys);
  EXPECT_EQ(FlavorNamed("null"), kAuthNone);
  EXPECT_EQ(FlavorNamed("lipkey"), std::nullopt);
  EXPECT_EQ(FlavorName(kRpcsecGss), "");
  EXPECT_EQ(FlavorName(390006), "");
}

TEST(AuthFlavorTest, KerberosIsThePseudoFlavors) {
  EXPECT_TRUE(IsKerberos(kKrb5));
  EXPECT_TRUE(IsKerberos(kKrb5i));
  EXPECT_TRUE(IsKerberos(kKrb5p));
  EXPECT_FALSE(IsKerberos(kAuthSys));
  EXPECT_FALSE(IsKerberos(kRpcsecGss));
  EXPECT_FALSE(IsKerberos(390006));
}

}  // namespace
}  // namespace nfs3d
